// The start of a replay: every thread waits until all exist, then all are
// released at one instant.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "replayer/backend.hpp"
#include "replayer/pacing_clock.hpp"

namespace mpior::replay {

// Holds every thread until all exist, then releases them at one instant.
class StartGate {
 public:
  // Thread side: returns the common start time.
  int64_t arrive() {
    std::unique_lock lock(mu_);
    ++ready_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return open_; });
    return t0_;
  }
  // Main side: waits for `n` threads, then opens. The start lies a little
  // ahead so that thousands of threads are awake before their first deadline.
  int64_t open_when_ready(uint32_t n, Backend* backend) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return ready_ >= n; });
    if (backend) backend->all_ready();  // every process's threads too
    ready_at_ = mono_now_ns();
    t0_ = ready_at_ + 1'000'000 + int64_t(n) * 2'000;
    open_ = true;
    cv_.notify_all();
    return t0_;
  }
  // When the last thread arrived (after open_when_ready).
  int64_t ready_at() const { return ready_at_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint32_t ready_ = 0;
  bool open_ = false;
  int64_t t0_ = 0;
  int64_t ready_at_ = 0;
};

}  // namespace mpior::replay
