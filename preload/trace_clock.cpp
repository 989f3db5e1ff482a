#include "preload/trace_clock.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "trace/tsc.hpp"

namespace mpior::preload::clock {
namespace {

// The TSC's rate is measured against CLOCK_MONOTONIC over the process's
// life so far: a conversion before kCalibrationNs measures again (its ticks
// lie in the span measured, so its error stays that of the two readings),
// one from then on uses the rate measured then. A process younger than
// kFirstCalibrationNs waits until it is that old (a short-lived child at
// exit waits the shorter span, not the full calibration).
constexpr int64_t kCalibrationNs = 10'000'000;
constexpr int64_t kFirstCalibrationNs = 1'000'000;

int64_t g_start_ticks = 0;  // this clock's own start, in ticks
int64_t g_clock_mono = 0;   // and in CLOCK_MONOTONIC ns
int64_t g_offset_ns = 0;    // from the trace's start to the clock's (a child's: after its parent's)
int64_t g_start_mono = 0;   // the trace's start
int64_t g_start_real = 0;
std::atomic<double> g_ns_per_tick{0.0};

double calibrate() {
  double v = g_ns_per_tick.load(std::memory_order_acquire);
  if (v > 0) return v;
  trace::MonotonicTsc now;
  do now = trace::monotonic_with_tsc();
  while (now.mono_ns - g_clock_mono < kFirstCalibrationNs);
  v = double(now.mono_ns - g_clock_mono) / std::max(1.0, now.tsc - double(g_start_ticks));
  if (now.mono_ns - g_clock_mono >= kCalibrationNs) g_ns_per_tick.store(v, std::memory_order_release);
  return v;
}

}  // namespace

void start(bool tsc) noexcept {
  g_use_tsc = tsc && trace::cpu_has_invariant_tsc();
  g_start_real = realtime_ns();
  if (g_use_tsc) {  // the rate's first end: a bracketed pair, as calibrate()'s second
    trace::MonotonicTsc start = trace::monotonic_with_tsc();
    g_start_mono = g_clock_mono = start.mono_ns;
    g_start_ticks = int64_t(std::llround(start.tsc));
  } else {
    g_start_mono = g_clock_mono = g_start_ticks = monotonic_ns();
  }
  g_offset_ns = 0;
  g_ns_per_tick.store(g_use_tsc ? 0.0 : 1.0);  // the TSC's rate: measured from this start
}

void start_at(int64_t mono_ns, int64_t real_ns, bool tsc) noexcept {
  start(tsc);
  g_offset_ns = g_clock_mono - mono_ns;
  g_start_mono = mono_ns;
  g_start_real = real_ns;
}

int64_t start_monotonic_ns() noexcept { return g_start_mono; }
int64_t start_realtime_ns() noexcept { return g_start_real; }

Scale scale() noexcept { return {g_use_tsc, g_start_ticks, g_offset_ns, g_use_tsc ? calibrate() : 1.0}; }

int64_t to_ns(int64_t ticks) noexcept { return scale().to_ns(ticks); }

int64_t duration_ns(int64_t ticks) noexcept { return scale().duration_ns(ticks); }

int64_t elapsed_ns() noexcept { return to_ns(now()); }

}  // namespace mpior::preload::clock
