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

// Each value's bin is computed (a bit scan and a shift): a cache of the
// last value's bin range missed on most values of real calls, whose
// durations and gaps spread over several bins.
void TimeAccum::add_many(const int64_t* v, size_t n) {
  if (n == 0) return;
  if (count_ == 0) {
    add_first(*v++);
    --n;
  }
  int64_t sum = sum_, lo = min_, hi = max_;
  const int64_t origin = origin_;
  double s2 = s2_;
  uint64_t* hist = hist_.data();
  uint32_t base = hist_base_, bins = uint32_t(hist_.size());
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = v[i];
    sum += x;
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
    const double d = double(x - origin);
    s2 += d * d;
    const uint32_t slot = uint32_t(time_bin(x)) - base;
    if (__builtin_expect(slot < bins, 1)) {
      ++hist[slot];
      continue;
    }
    hist_add_slow(x);  // the counts may have moved
    hist = hist_.data();
    base = hist_base_;
    bins = uint32_t(hist_.size());
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
