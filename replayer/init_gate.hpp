// Start-up as the ranks lived it. Ranks start when the launcher starts them
// (PlanRank::start_ns, on clocks aligned at MPI_Init), and MPI_Init returns
// on every rank once the last rank has called it (MPICH: a PMI barrier): the
// replay's threads that replay an MPI_Init meet, then take the shortest
// traced MPI_Init, the last arriver's, which waited for no one. A rank that
// started late so delays the others as it did, and an early one's long wait
// in MPI_Init is not replayed on top.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "trace/model.hpp"

namespace mpior::replay {

class InitGate {
 public:
  static bool meets(trace::Kind k) { return k == trace::Kind::MPI_Init || k == trace::Kind::MPI_Init_thread; }

  explicit InitGate(const trace::Plan& plan) {
    for (const trace::Stream& s : plan.streams)
      for (const trace::Leaf& l : s.leaves)
        if (l.depth == 0 && meets(l.kind)) {
          n_ += uint32_t(s.rank_list().size());
          if (l.dur.count() > 0) floor_ = floor_ < 0 ? l.dur.min() : std::min(floor_, l.dur.min());
          break;
        }
  }
  // Threads that replay an MPI_Init.
  uint32_t participants() const { return n_; }
  // The shortest traced MPI_Init of the plan, ns.
  int64_t floor_ns() const { return std::max<int64_t>(0, floor_); }

  // Waits until every participant came (or the replay aborted: false).
  bool meet(const std::atomic<bool>& aborted) {
    std::unique_lock lock(mu_);
    if (++arrived_ >= n_) cv_.notify_all();
    while (arrived_ < n_)
      if (aborted.load(std::memory_order_relaxed))
        return false;
      else
        cv_.wait_for(lock, std::chrono::milliseconds(100));
    return true;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint32_t n_ = 0, arrived_ = 0;
  int64_t floor_ = -1;
};

}  // namespace mpior::replay
