#include "trace/timing.hpp"

#include <algorithm>
#include <bit>

namespace mpior::trace {

uint8_t TimeStats::bin_of(int64_t v) {
  if (v < 4) return uint8_t(v < 0 ? 0 : v);
  int msb = 63 - std::countl_zero(uint64_t(v));
  int sub = int((uint64_t(v) >> (msb - 2)) & 3);
  return uint8_t(4 + (msb - 2) * 4 + sub);
}

int64_t TimeStats::bin_low(uint8_t bin) {
  if (bin < 4) return bin;
  int msb = (bin - 4) / 4 + 2, sub = (bin - 4) % 4;
  return int64_t(uint64_t(4 + sub) << (msb - 2));
}

int64_t TimeStats::bin_high(uint8_t bin) {
  if (bin < 4) return bin;
  if (bin == 255) return INT64_MAX;
  return bin_low(uint8_t(bin + 1)) - 1;
}

void TimeStats::hist_add(uint8_t bin, uint64_t n) {
  auto it = std::lower_bound(hist_.begin(), hist_.end(), bin, [](const auto& p, uint8_t b) { return p.first < b; });
  if (it != hist_.end() && it->first == bin)
    it->second += n;
  else
    hist_.insert(it, {bin, n});
}

void TimeStats::add(int64_t v) {
  if (count_ == 0) {
    min_ = max_ = v;
  } else {
    if (count_ == 1) hist_add(bin_of(min_), 1);
    hist_add(bin_of(v), 1);
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }
  ++count_;
  sum_ += v;
  double delta = double(v) - mean_;
  mean_ += delta / double(count_);
  m2_ += delta * (double(v) - mean_);
}

void TimeStats::merge(const TimeStats& o) {
  if (o.count_ == 0) return;
  if (count_ == 0) {
    *this = o;
    return;
  }
  if (count_ == 1) hist_add(bin_of(min_), 1);
  if (o.count_ == 1)
    hist_add(bin_of(o.min_), 1);
  else
    for (auto [b, n] : o.hist_) hist_add(b, n);
  double n1 = double(count_), n2 = double(o.count_), delta = o.mean_ - mean_;
  mean_ += delta * n2 / (n1 + n2);
  m2_ += o.m2_ + delta * delta * n1 * n2 / (n1 + n2);
  count_ += o.count_;
  sum_ += o.sum_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
}

int64_t TimeStats::sample(double u_bin, double u_within) const {
  if (count_ <= 1 || hist_.empty()) return min_;
  uint64_t target = uint64_t(u_bin * double(count_));
  for (auto [b, n] : hist_) {
    if (target < n) {
      int64_t lo = std::max(bin_low(b), min_), hi = std::min(bin_high(b), max_);
      if (hi <= lo) return lo;
      return lo + int64_t(u_within * double(hi - lo));
    }
    target -= n;
  }
  return max_;
}

bool TimeStats::restore(TimeStats* out, uint64_t count, int64_t sum, int64_t min, int64_t max, double mean, double m2,
                        std::vector<std::pair<uint8_t, uint64_t>> hist) {
  if (count > 0 && min > max) return false;
  uint64_t total = 0;
  for (size_t i = 0; i < hist.size(); ++i) {
    if (i > 0 && hist[i].first <= hist[i - 1].first) return false;
    total += hist[i].second;
  }
  if (count > 1 ? total != count : !hist.empty()) return false;
  out->count_ = count;
  out->sum_ = sum;
  out->min_ = min;
  out->max_ = max;
  out->mean_ = mean;
  out->m2_ = m2;
  out->hist_ = std::move(hist);
  return true;
}

}  // namespace mpior::trace
