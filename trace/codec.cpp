#include "trace/codec.hpp"

#include <array>
#include <cstring>

namespace mpior::trace {
namespace {

constexpr std::array<uint32_t, 256> make_crc_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr auto kCrcTable = make_crc_table();

}  // namespace

uint32_t crc32c(std::span<const uint8_t> data, uint32_t crc) {
  crc = ~crc;
  for (uint8_t b : data) crc = kCrcTable[(crc ^ b) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

void Encoder::uv(uint64_t v) {
  while (v >= 0x80) {
    buf_.push_back(uint8_t(v | 0x80));
    v >>= 7;
  }
  buf_.push_back(uint8_t(v));
}

void Encoder::f64(double v) {
  uint64_t u;
  std::memcpy(&u, &v, 8);
  fixed64(u);
}

void Encoder::str(std::string_view s) {
  uv(s.size());
  buf_.insert(buf_.end(), s.begin(), s.end());
}

void Encoder::fixed32(uint32_t v) {
  for (int i = 0; i < 4; ++i) buf_.push_back(uint8_t(v >> (8 * i)));
}

void Encoder::fixed64(uint64_t v) {
  for (int i = 0; i < 8; ++i) buf_.push_back(uint8_t(v >> (8 * i)));
}

void Decoder::fail(const std::string& why) const {
  throw FormatError(what_ + ": " + why + " (at byte " + std::to_string(pos_) + ")");
}

void Decoder::need(size_t n) {
  if (data_.size() - pos_ < n) fail("truncated");
}

uint8_t Decoder::u8() {
  need(1);
  return data_[pos_++];
}

uint64_t Decoder::uv() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    uint8_t b = u8();
    v |= uint64_t(b & 0x7F) << shift;
    if (!(b & 0x80)) return v;
  }
  fail("malformed number");
}

double Decoder::f64() {
  uint64_t u = fixed64();
  double v;
  std::memcpy(&v, &u, 8);
  return v;
}

std::string Decoder::str() {
  uint64_t n = count(1);
  std::string s(reinterpret_cast<const char*>(data_.data() + pos_), n);
  pos_ += n;
  return s;
}

uint32_t Decoder::fixed32() {
  need(4);
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(data_[pos_++]) << (8 * i);
  return v;
}

uint64_t Decoder::fixed64() {
  need(8);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(data_[pos_++]) << (8 * i);
  return v;
}

uint64_t Decoder::count(size_t min_bytes) {
  uint64_t n = uv();
  if (n > (data_.size() - pos_) / (min_bytes ? min_bytes : 1)) fail("implausible element count " + std::to_string(n));
  return n;
}

}  // namespace mpior::trace
