#include "trace/bytes_text.hpp"

#include <cstdint>

namespace mpior::trace {
namespace {

// Length of the valid UTF-8 sequence at s[i] (RFC 3629: no overlongs, no
// surrogates, at most U+10FFFF), 0 when the byte does not start one.
size_t utf8_length(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return uint8_t(s[i + k]); };
  uint8_t c = b(0);
  if (c < 0x80) return 1;
  size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((b(k) & 0xC0) != 0x80) return 0;
  if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
  if (c == 0xED && b(1) >= 0xA0) return 0;  // surrogate
  if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
  if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
  return n;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

std::string escape_bytes(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '\\') {
      out += "\\\\";
      ++i;
      continue;
    }
    size_t n = utf8_length(s, i);
    if (n) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    uint8_t c = uint8_t(s[i++]);
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

std::optional<std::string> unescape_bytes(std::string_view t) {
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '\\') {
      out += t[i];
      continue;
    }
    if (i + 1 < t.size() && t[i + 1] == '\\') {
      out += '\\';
      ++i;
    } else if (i + 3 < t.size() && t[i + 1] == 'x' && hex_value(t[i + 2]) >= 0 && hex_value(t[i + 3]) >= 0) {
      out += char(hex_value(t[i + 2]) * 16 + hex_value(t[i + 3]));
      i += 3;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace mpior::trace
