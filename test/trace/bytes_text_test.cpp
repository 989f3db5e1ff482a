#include "trace/bytes_text.hpp"

#include <catch2/catch.hpp>
#include <random>

using mpior::trace::escape_bytes;
using mpior::trace::unescape_bytes;

TEST_CASE("escape_bytes keeps valid UTF-8 and escapes the rest reversibly") {
  CHECK(escape_bytes("/tmp/plain.dat") == "/tmp/plain.dat");
  CHECK(escape_bytes("/tmp/caf\xC3\xA9") == "/tmp/caf\xC3\xA9");
  CHECK(escape_bytes("/tmp/a\xFF"
                     "b") == "/tmp/a\\xFFb");
  CHECK(escape_bytes("a\\xFF") == "a\\\\xFF");
  CHECK(escape_bytes("\xC3") == "\\xC3");                    // truncated sequence
  CHECK(escape_bytes("\xC0\x80") == "\\xC0\\x80");           // overlong NUL
  CHECK(escape_bytes("\xED\xA0\x80") == "\\xED\\xA0\\x80");  // surrogate
  CHECK(unescape_bytes("a\\xffb") == std::string("a\xFF"
                                                 "b"));
  CHECK(!unescape_bytes("a\\q"));
  CHECK(!unescape_bytes("a\\x4"));
}

TEST_CASE("escape_bytes round-trips random byte strings") {
  std::mt19937 rng(12);
  for (int i = 0; i < 2000; ++i) {
    std::string s(rng() % 24, '\0');
    for (char& c : s) c = char(rng() % 4 == 0 ? '\\' : rng() % 256);
    std::string e = escape_bytes(s);
    REQUIRE(unescape_bytes(e) == s);
  }
}
