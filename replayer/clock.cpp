#include "clock.hpp"

#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cmath>

namespace mpior::replay {

int64_t mono_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int64_t Pacer::deadline_for(int64_t gap_ns) {
  if (gap_ns <= 0 || scale_ == 0) return prev_end_;
  int64_t gap = scale_ == 1.0 ? gap_ns : int64_t(std::llround(double(gap_ns) * scale_));
  int64_t pay = std::min(debt_, gap);
  debt_ -= pay;
  return prev_end_ + gap - pay;
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

}  // namespace mpior::replay
