#include "extrap/stream_timing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "extrap/models.hpp"

namespace mpior::extrap {

namespace {

std::vector<std::pair<uint8_t, uint64_t>> scaled_histogram(const trace::TimeStats& base, double factor, uint64_t count,
                                                           int64_t mean) {
  std::vector<std::pair<uint8_t, uint64_t>> out;
  if (count <= 1) return out;
  if (base.histogram().empty()) return {{trace::TimeStats::bin_of(mean), count}};
  int shift = factor > 0 ? int(std::lround(4 * std::log2(factor))) : 0;
  uint64_t given = 0;
  for (auto [bin, c] : base.histogram()) {
    int b = std::clamp(int(bin) + shift, 0, 254);
    uint64_t scaled = uint64_t(double(c) * double(count) / double(base.count()));
    if (!out.empty() && out.back().first == uint8_t(b))
      out.back().second += scaled;
    else
      out.emplace_back(uint8_t(b), scaled);
    given += scaled;
  }
  auto biggest = std::max_element(out.begin(), out.end(), [](auto& a, auto& b) { return a.second < b.second; });
  biggest->second += count - given;  // rounding down never gives more than count
  std::erase_if(out, [](auto& p) { return p.second == 0; });
  return out;
}

}  // namespace

trace::TimeStats extrapolate_timing(const std::vector<std::pair<int64_t, trace::TimeStats>>& per_input,
                                    const std::vector<size_t>& ranks_per_input, int64_t n, size_t ranks,
                                    std::string* formula, std::string* name) {
  std::vector<std::pair<int64_t, double>> means, counts;
  const trace::TimeStats* base = nullptr;
  for (size_t i = 0; i < per_input.size(); ++i) {
    const auto& [in_n, t] = per_input[i];
    if (t.count() == 0) continue;
    means.emplace_back(in_n, t.mean());
    counts.emplace_back(in_n, double(t.count()) / double(std::max<size_t>(1, ranks_per_input[i])));
    base = &t;  // inputs ascend: the largest run's distribution is the shape kept
  }
  if (!base || ranks == 0) return {};
  TimingFit mean_fit = fit_timing(means);
  double mean = mean_fit.predict(n);
  *formula = fmt::format("mean = {} ns", mean_fit.fit.formula());
  *name = mean_fit.fit.name;
  uint64_t count = uint64_t(std::llround(std::max(1.0, fit_timing(counts).predict(n)) * double(ranks)));
  double factor = base->mean() > 0 ? mean / base->mean() : 1.0;
  int64_t lo = std::llround(double(base->min()) * factor), hi = std::llround(double(base->max()) * factor);
  lo = std::min(lo, int64_t(mean));
  hi = std::max({hi, lo, int64_t(std::ceil(mean))});
  double var = base->variance() * factor * factor;
  trace::TimeStats t;
  int64_t rounded = std::llround(mean);
  trace::TimeStats::restore(&t, count, int64_t(std::llround(mean * double(count))), lo, hi, mean,
                            var * double(count > 1 ? count - 1 : 0), scaled_histogram(*base, factor, count, rounded));
  return t;
}

}  // namespace mpior::extrap
