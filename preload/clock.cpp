#include "clock.hpp"

#include <atomic>

#include "tsc.hpp"

namespace mpior::preload::clock {
namespace {

constexpr int64_t kCalibrationNs = 10'000'000;

int64_t g_start_ticks = 0;
int64_t g_start_mono = 0;
int64_t g_start_real = 0;
std::atomic<double> g_ns_per_tick{0.0};

double calibrate() {
  double v = g_ns_per_tick.load(std::memory_order_acquire);
  if (v > 0) return v;
  int64_t mono, tsc;
  do {
    mono = monotonic_ns();
    tsc = int64_t(__rdtsc());
  } while (mono - g_start_mono < kCalibrationNs);
  v = double(mono - g_start_mono) / double(tsc - g_start_ticks);
  g_ns_per_tick.store(v, std::memory_order_release);
  return v;
}

}  // namespace

void start(bool tsc) noexcept {
  g_use_tsc = tsc && trace::cpu_has_invariant_tsc();
  g_start_real = realtime_ns();
  g_start_mono = monotonic_ns();
  g_start_ticks = g_use_tsc ? int64_t(__rdtsc()) : g_start_mono;
  if (!g_use_tsc) g_ns_per_tick.store(1.0);
}

void start_at(int64_t mono_ns, int64_t real_ns) noexcept {
  g_use_tsc = false;
  g_start_real = real_ns;
  g_start_mono = mono_ns;
  g_start_ticks = mono_ns;
  g_ns_per_tick.store(1.0);
}

int64_t start_monotonic_ns() noexcept { return g_start_mono; }
int64_t start_realtime_ns() noexcept { return g_start_real; }

int64_t to_ns(int64_t ticks) noexcept {
  if (!g_use_tsc) return ticks - g_start_ticks;
  return int64_t(double(ticks - g_start_ticks) * calibrate());
}

int64_t duration_ns(int64_t ticks) noexcept {
  if (!g_use_tsc) return ticks;
  return int64_t(double(ticks) * calibrate());
}

int64_t elapsed_ns() noexcept { return to_ns(now()); }

}  // namespace mpior::preload::clock
