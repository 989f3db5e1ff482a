// Byte-level encoding shared by every mpior file: LEB128 varints (zigzag for
// signed values), strings, doubles, and the CRC-32C the containers carry.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "trace/tool_error.hpp"

namespace mpior::trace {

// A file that cannot be read: the message names the file and what is wrong.
class FormatError : public ToolError {
 public:
  using ToolError::ToolError;
};

uint32_t crc32c(std::span<const uint8_t> data, uint32_t crc = 0);

class Encoder {
 public:
  void u8(uint8_t v) { buf_.push_back(v); }
  void uv(uint64_t v);
  void sv(int64_t v) { uv((uint64_t(v) << 1) ^ uint64_t(v >> 63)); }
  void f64(double v);
  void str(std::string_view s);
  void raw(std::span<const uint8_t> b) { buf_.insert(buf_.end(), b.begin(), b.end()); }
  void fixed32(uint32_t v);
  void fixed64(uint64_t v);
  std::vector<uint8_t>& bytes() { return buf_; }

 private:
  std::vector<uint8_t> buf_;
};

class Decoder {
 public:
  Decoder(std::span<const uint8_t> data, std::string what) : data_(data), what_(std::move(what)) {}
  uint8_t u8();
  uint64_t uv();
  int64_t sv() {
    uint64_t u = uv();
    return int64_t(u >> 1) ^ -int64_t(u & 1);
  }
  double f64();
  std::string str();
  uint32_t fixed32();
  uint64_t fixed64();
  // A count of elements about to be read; rejects counts the remaining bytes
  // cannot hold (each element takes at least min_bytes).
  uint64_t count(size_t min_bytes = 1);
  bool done() const { return pos_ == data_.size(); }
  size_t pos() const { return pos_; }
  size_t size() const { return data_.size(); }
  [[noreturn]] void fail(const std::string& why) const;

 private:
  void need(size_t n);
  std::span<const uint8_t> data_;
  size_t pos_ = 0;
  std::string what_;
};

}  // namespace mpior::trace
