// Timing of one trace position accumulated on the tracer's hot path: the same
// statistics as TimeStats (count, sum, min, max, mean, variance, log-binned
// histogram) at a few nanoseconds per value. Sums are kept relative to the
// first value, so the variance of a tight distribution far from zero keeps
// its precision; TimeStats is made from them at snapshot time.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "trace/timing.hpp"

namespace mpior::trace {

// TimeStats::bin_of, inline for the hot path (a test checks they agree):
// from 4 on, v's top three bits (4 to 7) plus four bins per bit below them
// (4 + 4 * shift + the bits' low two is the same sum, in fewer steps).
inline uint8_t time_bin(int64_t v) {
  if (v < 4) return uint8_t(v < 0 ? 0 : v);
  const int shift = 61 - std::countl_zero(uint64_t(v));
  return uint8_t(4 * shift + int(uint64_t(v) >> shift));
}

class TimeAccum {
 public:
  void add(int64_t v) {
    if (count_ == 0) return add_first(v);
    ++count_;
    sum_ += v;
    if (v < min_) min_ = v;
    if (v > max_) max_ = v;
    double d = double(v - origin_);
    s2_ += d * d;
    uint32_t slot = uint32_t(time_bin(v)) - hist_base_;
    if (slot < hist_.size())
      ++hist_[slot];
    else
      hist_add_slow(v);
  }
  // add() of each value in order, with the same sums bit for bit: the
  // accumulators stay in registers across the run (the builder hands a
  // loop's repeated position its times a batch at a time).
  void add_many(const int64_t* v, size_t n);
  void merge(const TimeAccum& o);
  void clear();
  uint64_t count() const { return count_; }
  TimeStats stats() const;
  size_t heap_bytes() const { return hist_.capacity() * sizeof(uint64_t); }

 private:
  void add_first(int64_t v);
  void hist_add(uint8_t bin, uint64_t n);
  void hist_add_slow(int64_t v);

  uint64_t count_ = 0;
  int64_t sum_ = 0, min_ = 0, max_ = 0;
  int64_t origin_ = 0;  // the first value: s2_ sums (v - origin_)^2
  double s2_ = 0;
  double s1() const { return double(sum_ - int64_t(count_) * origin_); }  // sum of (v - origin_)
  // Dense counts of bins hist_base_, hist_base_ + 1, ...: a position's times
  // span few bins, and a steady loop then pays one increment per value.
  // Empty while count_ <= 1 (a position seen once needs no histogram).
  uint32_t hist_base_ = 0;
  std::vector<uint64_t> hist_;
};

}  // namespace mpior::trace
