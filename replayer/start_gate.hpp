// The start of a replay: every thread waits until all exist, then all are
// released at one instant.
#pragma once

#include <atomic>
#include <climits>
#include <cstdint>
#include <ctime>

#include "replayer/backend.hpp"
#include "replayer/futex.hpp"
#include "replayer/pacing_clock.hpp"

namespace mpior::replay {

// Holds every thread until all exist, then releases them at one instant.
// Futexes on the two counters, no mutex: only the last arrival wakes the main
// thread (with thousands of threads, a wake at every arrival cost a context
// switch each), and the released threads return without taking a lock in
// turn (a condition variable's broadcast makes each re-acquire its mutex, a
// convoy of thousands).
class StartGate {
 public:
  // Thread side: returns the common start time.
  int64_t arrive() {
    // Sequentially consistent with open_when_ready's store and load of
    // expected_ and ready_: the last arrival sees the count, or the main
    // thread sees every arrival.
    uint32_t now = ready_.fetch_add(1) + 1;
    if (now == expected_.load()) futex_wake(ready_, 1);
    while (open_.load(std::memory_order_acquire) == 0) futex_wait(open_, 0);
    return t0_;
  }
  // Main side: waits for `n` threads, then opens. The start lies a little
  // ahead so that thousands of threads are awake before their first deadline.
  int64_t open_when_ready(uint32_t n, Backend* backend) {
    expected_.store(n);
    for (uint32_t seen = ready_.load(); seen < n; seen = ready_.load()) futex_wait(ready_, seen);
    if (backend) backend->all_ready();  // every process's threads too
    ready_at_ = mono_now_ns();
    ready_cpu_ns_ = process_cpu_ns();
    t0_ = ready_at_ + 1'000'000 + int64_t(n) * 2'000;
    open_.store(1, std::memory_order_release);
    futex_wake(open_);
    return t0_;
  }
  // When the last thread arrived (after open_when_ready).
  int64_t ready_at() const { return ready_at_; }
  // The process's CPU time (user and system, every thread) then.
  int64_t ready_cpu_ns() const { return ready_cpu_ns_; }

  static int64_t process_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  }

 private:
  std::atomic<uint32_t> ready_{0};
  std::atomic<uint32_t> expected_{0};  // 0 until the main thread waits
  std::atomic<uint32_t> open_{0};
  int64_t t0_ = 0;  // written before open_'s release store
  int64_t ready_at_ = 0;
  int64_t ready_cpu_ns_ = 0;
};

}  // namespace mpior::replay
