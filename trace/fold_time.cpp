#include "trace/fold_time.hpp"

#include <algorithm>

namespace mpior::trace {

void TimeAccum::add_first(int64_t v) {
  count_ = 1;
  sum_ = min_ = max_ = origin_ = v;
  s2_ = 0;
  hist_.clear();
}

void TimeAccum::hist_add_slow(int64_t v) {
  if (hist_.empty()) hist_add(TimeStats::bin_of(origin_), 1);  // the first value, not counted yet
  hist_add(TimeStats::bin_of(v), 1);
}

void TimeAccum::hist_add(uint8_t bin, uint64_t n) {
  if (hist_.empty()) {
    hist_base_ = bin;
    hist_.assign(1, 0);
  } else if (bin < hist_base_) {
    hist_.insert(hist_.begin(), hist_base_ - bin, 0);
    hist_base_ = bin;
  } else if (bin - hist_base_ >= hist_.size()) {
    hist_.resize(bin - hist_base_ + 1, 0);
  }
  hist_[bin - hist_base_] += n;
}

// The bin of the value before is kept as a range: a run's values mostly
// fall in the one bin (a quarter of an octave wide), so most pay a compare
// instead of time_bin.
void TimeAccum::add_many(const int64_t* v, size_t n) {
  if (n == 0) return;
  if (count_ == 0) {
    add_first(*v++);
    --n;
  }
  int64_t sum = sum_, lo = min_, hi = max_;
  const int64_t origin = origin_;
  double s2 = s2_;
  uint64_t* bin = nullptr;  // the last value's count, for values in [bin_lo, bin_lo + bin_width)
  int64_t bin_lo = 0;
  uint64_t bin_width = 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = v[i];
    sum += x;
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
    const double d = double(x - origin);
    s2 += d * d;
    if (uint64_t(x) - uint64_t(bin_lo) < bin_width) {
      ++*bin;
      continue;
    }
    const uint8_t b = time_bin(x);
    const uint32_t slot = uint32_t(b) - hist_base_;
    if (slot >= hist_.size()) {
      hist_add_slow(x);
      bin_width = 0;  // the counts may have moved
      continue;
    }
    bin = &hist_[slot];
    ++*bin;
    if (b < 4) {  // one value each (negative values all in bin 0: not cached)
      bin_lo = b;
      bin_width = x < 0 ? 0 : 1;
    } else {
      const int shift = (b - 4) / 4;
      bin_lo = int64_t(4 + (b - 4) % 4) << shift;
      bin_width = uint64_t(1) << shift;
    }
  }
  count_ += n;
  sum_ = sum;
  min_ = lo;
  max_ = hi;
  s2_ = s2;
}

void TimeAccum::merge(const TimeAccum& o) {
  if (o.count_ == 0) return;
  if (count_ == 0) {
    *this = o;
    return;
  }
  // Re-base o's sums on our origin: sum (v - a) = sum (v - b) + n (b - a).
  double shift = double(o.origin_ - origin_), n = double(o.count_);
  s2_ += o.s2_ + 2 * shift * o.s1() + n * shift * shift;
  count_ += o.count_;
  sum_ += o.sum_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
  if (hist_.empty()) hist_add(TimeStats::bin_of(origin_), 1);
  if (o.hist_.empty()) hist_add(TimeStats::bin_of(o.origin_), 1);
  for (size_t i = 0; i < o.hist_.size(); ++i)
    if (o.hist_[i]) hist_add(uint8_t(o.hist_base_ + i), o.hist_[i]);
}

void TimeAccum::clear() {
  count_ = 0;
  sum_ = min_ = max_ = origin_ = 0;
  s2_ = 0;
  hist_base_ = 0;
  hist_.clear();
}

TimeStats TimeAccum::stats() const {
  TimeStats t;
  if (count_ == 0) return t;
  double n = double(count_);
  double s1 = this->s1();
  double mean = double(origin_) + s1 / n;
  double m2 = count_ > 1 ? std::max(0.0, s2_ - s1 * s1 / n) : 0.0;
  std::vector<std::pair<uint8_t, uint64_t>> hist;
  if (count_ > 1)
    for (size_t i = 0; i < hist_.size(); ++i)
      if (hist_[i]) hist.emplace_back(uint8_t(hist_base_ + i), hist_[i]);
  TimeStats::restore(&t, count_, sum_, min_, max_, mean, m2, std::move(hist));
  return t;
}

}  // namespace mpior::trace
