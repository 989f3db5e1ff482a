// Timing of one trace position over its occurrences: count, sum, min, max,
// mean and variance, plus a log-binned histogram (scalaioextrap §II: delta
// times kept as statistics and histograms instead of timestamps).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace mpior::trace {

class TimeStats {
 public:
  void add(int64_t v);
  void merge(const TimeStats& o);

  uint64_t count() const { return count_; }
  int64_t sum() const { return sum_; }
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }
  double mean() const { return mean_; }
  double variance() const { return count_ > 1 ? m2_ / double(count_ - 1) : 0.0; }
  // Sparse histogram, sorted by bin: (bin, occurrences). Empty while count <= 1.
  const std::vector<std::pair<uint8_t, uint64_t>>& histogram() const { return hist_; }
  // Draws a value distributed like the histogram, from a uniform u in [0,1).
  int64_t sample(double u_bin, double u_within) const;

  // Log bins: four per power of two, exact below 4.
  static uint8_t bin_of(int64_t v);
  static int64_t bin_low(uint8_t bin);
  static int64_t bin_high(uint8_t bin);  // inclusive

  // Reconstruction from a decoded file; checks consistency.
  static bool restore(TimeStats* out, uint64_t count, int64_t sum, int64_t min, int64_t max, double mean, double m2,
                      std::vector<std::pair<uint8_t, uint64_t>> hist);
  double m2() const { return m2_; }
  bool operator==(const TimeStats&) const = default;

 private:
  void hist_add(uint8_t bin, uint64_t n);
  uint64_t count_ = 0;
  int64_t sum_ = 0;
  int64_t min_ = 0;
  int64_t max_ = 0;
  double mean_ = 0;
  double m2_ = 0;
  std::vector<std::pair<uint8_t, uint64_t>> hist_;
};

}  // namespace mpior::trace
