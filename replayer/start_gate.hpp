// The start of a replay: every thread waits until all exist, then all are
// released at one instant.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <ctime>
#include <mutex>

#include "replayer/backend.hpp"
#include "replayer/pacing_clock.hpp"

namespace mpior::replay {

// Holds every thread until all exist, then releases them at one instant.
// An arrival wakes only the main thread (its own condition variable): were
// the waiting threads woken too, thousands would each wake at every arrival.
class StartGate {
 public:
  // Thread side: returns the common start time.
  int64_t arrive() {
    std::unique_lock lock(mu_);
    ++ready_;
    arrived_.notify_one();
    open_cv_.wait(lock, [this] { return open_; });
    return t0_;
  }
  // Main side: waits for `n` threads, then opens. The start lies a little
  // ahead so that thousands of threads are awake before their first deadline.
  int64_t open_when_ready(uint32_t n, Backend* backend) {
    std::unique_lock lock(mu_);
    arrived_.wait(lock, [&] { return ready_ >= n; });
    if (backend) backend->all_ready();  // every process's threads too
    ready_at_ = mono_now_ns();
    ready_cpu_ns_ = process_cpu_ns();
    t0_ = ready_at_ + 1'000'000 + int64_t(n) * 2'000;
    open_ = true;
    open_cv_.notify_all();
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
  std::mutex mu_;
  std::condition_variable arrived_;  // main waits here
  std::condition_variable open_cv_;  // the replay threads wait here
  uint32_t ready_ = 0;
  bool open_ = false;
  int64_t t0_ = 0;
  int64_t ready_at_ = 0;
  int64_t ready_cpu_ns_ = 0;
};

}  // namespace mpior::replay
