// One description per record. A record's layout on disk is written once, as
// a function template over the direction it runs in:
//   template <class Io> void fields(Io& io, FileEntry& f) { io.str(f.path); io.sv(f.flags); }
// Run with a Put it encodes the record, with a Get it decodes it, checking
// what it reads (io.check, the ranged and enum fields); a field added by a
// later format version is read and written under io.since(version).
// Internal to trace/ (format_body.cpp, format_plan.cpp): others use format.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/codec.hpp"

namespace mpior::trace::body {

class Put {
 public:
  static constexpr bool kReading = false;
  Put(Encoder& e, uint32_t version) : e_(e), version_(version) {}
  Encoder& encoder() { return e_; }
  // The file's version has the fields added by format version v.
  bool since(uint32_t v) const { return version_ >= v; }

  template <class T>
  void uv(const T& v) {
    e_.uv(uint64_t(v));
  }
  template <class T>
  void sv(const T& v) {
    e_.sv(int64_t(v));
  }
  template <class T>
  void u8(const T& v) {
    e_.u8(uint8_t(v));
  }
  void f64(double v) { e_.f64(v); }
  void fixed32(uint32_t v) { e_.fixed32(v); }
  void fixed64(uint64_t v) { e_.fixed64(v); }
  void str(std::string_view s) { e_.str(s); }
  // A signed field read back only within [lo, hi].
  template <class T>
  void sv_in(const T& v, int64_t, int64_t, std::string_view) {
    e_.sv(int64_t(v));
  }
  // An enum in a byte, read back only up to `last` (else: why and the number).
  template <class E>
  void enum8(const E& v, E, std::string_view) {
    e_.u8(uint8_t(v));
  }
  // An enum as a varint, read back only below `end`.
  template <class E>
  void enum_uv(const E& v, uint64_t, std::string_view) {
    e_.uv(uint64_t(v));
  }
  // Flags in one byte, the first in bit 0.
  template <class... B>
  void bits(const B&... b) {
    unsigned i = 0, x = 0;
    ((x |= unsigned(bool(b)) << i++), ...);
    e_.u8(uint8_t(x));
  }
  // A count, then each element as `each` describes it; a reader refuses
  // counts the bytes left cannot hold at min_bytes an element.
  template <class T, class F>
  void list(std::vector<T>& v, size_t, F&& each) {
    e_.uv(v.size());
    for (T& x : v) each(x);
  }
  // n elements, their number stored nowhere: the record's earlier fields
  // tell it (the writer's vector holds n).
  template <class T, class F>
  void each(std::vector<T>& v, size_t, F&& each) {
    for (T& x : v) each(x);
  }
  // Fields at the end of a record written only when there are some: read
  // when bytes remain.
  template <class T, class F>
  void optional_tail(std::vector<T>& v, F&& write) {
    if (!v.empty()) write();
  }
  template <class F>
  void check(F&&) {}

 private:
  Encoder& e_;
  uint32_t version_;
};

class Get {
 public:
  static constexpr bool kReading = true;
  Get(Decoder& d, uint32_t version) : d_(d), version_(version) {}
  Decoder& decoder() { return d_; }
  bool since(uint32_t v) const { return version_ >= v; }

  template <class T>
  void uv(T& v) {
    v = T(d_.uv());
  }
  template <class T>
  void sv(T& v) {
    v = T(d_.sv());
  }
  template <class T>
  void u8(T& v) {
    v = T(d_.u8());
  }
  void f64(double& v) { v = d_.f64(); }
  void fixed32(uint32_t& v) { v = d_.fixed32(); }
  void fixed64(uint64_t& v) { v = d_.fixed64(); }
  void str(std::string& s) { s = d_.str(); }
  template <class T>
  void sv_in(T& v, int64_t lo, int64_t hi, std::string_view why) {
    int64_t x = d_.sv();
    if (x < lo || x > hi) d_.fail(std::string(why));
    v = T(x);
  }
  template <class E>
  void enum8(E& v, E last, std::string_view why) {
    uint8_t x = d_.u8();
    if (x > uint8_t(last)) d_.fail(std::string(why) + " " + std::to_string(x));
    v = E(x);
  }
  template <class E>
  void enum_uv(E& v, uint64_t end, std::string_view why) {
    uint64_t x = d_.uv();
    if (x >= end) d_.fail(std::string(why) + " " + std::to_string(x));
    v = E(x);
  }
  template <class... B>
  void bits(B&... b) {
    unsigned i = 0, x = d_.u8();
    ((b = (x >> i++) & 1), ...);
  }
  template <class T, class F>
  void list(std::vector<T>& v, size_t min_bytes, F&& each) {
    v.resize(d_.count(min_bytes));
    for (T& x : v) each(x);
  }
  template <class T, class F>
  void each(std::vector<T>& v, size_t n, F&& each) {
    v.resize(n);
    for (T& x : v) each(x);
  }
  template <class T, class F>
  void optional_tail(std::vector<T>&, F&& read) {
    if (!d_.done()) read();
  }
  // `test(decoder)` calls decoder.fail when what was read so far is wrong.
  template <class F>
  void check(F&& test) {
    test(d_);
  }

 private:
  Decoder& d_;
  uint32_t version_;
};

}  // namespace mpior::trace::body
