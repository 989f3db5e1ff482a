#include "replayer/pacing_clock.hpp"

#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <utility>

#include "trace/schedstat.hpp"
#include "trace/tsc.hpp"

namespace mpior::replay {

namespace clock_detail {

int64_t clock_monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// A reading whose TSC bracket is wider than 2 us was interrupted between
// the reads: taken again (three times at most), else every reading until the
// next anchor would be off by the interruption.
int64_t reanchor() {
  for (int tries = 0;; ++tries) {
    uint64_t a = __rdtsc();
    int64_t ns = clock_monotonic_ns();
    uint64_t b = __rdtsc();
    if (double(b - a) * g_ns_per_tick.load(std::memory_order_relaxed) < 2000 || tries == 3) {
      t_anchor = {int64_t(a + (b - a) / 2), ns};
      return ns;
    }
  }
}

}  // namespace clock_detail

void start_clock() {
  static const bool started = [] {
    if (!trace::cpu_has_invariant_tsc()) return false;
    constexpr int64_t kMeasureNs = 2'000'000, kAnchorNs = 100'000;
    auto [ns0, tsc0] = trace::monotonic_with_tsc();
    trace::MonotonicTsc now;
    do now = trace::monotonic_with_tsc();
    while (now.mono_ns - ns0 < kMeasureNs);
    double per_tick = double(now.mono_ns - ns0) / (now.tsc - tsc0);
    if (!(per_tick > 0)) return false;
    clock_detail::g_anchor_ticks.store(uint64_t(double(kAnchorNs) / per_tick), std::memory_order_relaxed);
    clock_detail::g_ns_per_tick.store(per_tick, std::memory_order_relaxed);
    return true;
  }();
  (void)started;
}

int64_t Pacer::deadline_for(int64_t gap_ns) {
  int64_t gap = paced(gap_ns), pay = std::min(debt_, gap);
  debt_ -= pay;
  return prev_end_ + gap - pay;
}

int64_t Pacer::gap_end(int64_t gap_ns) const {
  int64_t gap = paced(gap_ns);
  return prev_end_ + gap - std::min(debt_, gap);
}

int64_t Pacer::paced(int64_t gap_ns) const {
  if (gap_ns <= 0 || scale_ == 0) return 0;
  return scale_ == 1.0 ? gap_ns : int64_t(std::llround(double(gap_ns) * scale_));
}

int64_t sleep_until(int64_t deadline_ns, const std::atomic<bool>& abort) {
  constexpr int64_t kSlice = 1'000'000'000;
  // The last microseconds are spun, as an MPI library polls: a thread put to
  // sleep for them wakes late and cold, and its next call runs slower than
  // the application's did.
  constexpr int64_t kSpin = 20'000;
  for (;;) {
    int64_t now = mono_now_ns();
    if (now >= deadline_ns || abort.load(std::memory_order_relaxed)) return now;
    if (deadline_ns - now <= kSpin) {
      while ((now = mono_now_ns()) < deadline_ns) {
      }
      return now;
    }
    int64_t until = std::min(deadline_ns, now + kSlice);
    timespec ts{time_t(until / 1'000'000'000), long(until % 1'000'000'000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
  }
}

void tighten_timer_slack() { prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL); }

// No lock: 8,192 threads reading one at a time behind a lock while the others
// poll took minutes on two cores.
int64_t thread_cpu_wait_ns() { return std::max<int64_t>(0, trace::thread_run_delay_ns()); }

}  // namespace mpior::replay
