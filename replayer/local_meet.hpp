// The members of one plan communicator that a --mpi process holds meeting
// before the communicator's collective: the last to arrive makes the MPI call
// for all of them.
#pragma once

#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

#include "replayer/mpi_lateness.hpp"

namespace mpior::replay {

class LocalMeet {
 public:
  explicit LocalMeet(uint32_t members) : members_(members) {}
  // The process holds one member: agree() is the call alone.
  bool solo() const { return members_ <= 1; }
  // `drive`, when given, is called while a member waits for the others, until
  // it returns false: the member's sends to other processes move on (a
  // transport whose sender must call MPI), as its waits for a message do.
  template <class F>
  void run(F&& call, const std::function<bool()>* drive = nullptr) {
    Arrival none;
    agree(
        none, [&](Arrival&) { call(); }, drive);
  }
  // The members' arrivals agreed here, then by the last one's `call` over
  // the communicator's processes; each leaves with the agreed one in `mine`.
  template <class F>
  void agree(Arrival& mine, F&& call, const std::function<bool()>* drive = nullptr) {
    if (members_ <= 1) return call(mine);
    std::unique_lock lock(mu_);
    const uint64_t gen = gen_.load(std::memory_order_relaxed);
    if (arrived_ == 0) gathering_ = mine;
    gathering_.latest_with(mine);
    if (++arrived_ == members_) {
      call(gathering_);
      agreed_ = gathering_;
      arrived_ = 0;
      gen_.store(gen + 1, std::memory_order_release);
      cv_.notify_all();
    } else {
      if (drive) {
        lock.unlock();
        drive_while_waiting(gen, *drive);
        lock.lock();
      }
      cv_.wait(lock, [&] { return gen_.load(std::memory_order_relaxed) != gen; });
    }
    // Published apart from gathering_: a member that left first may already
    // have opened the next round; that round's result needs this member.
    mine = agreed_;
  }

 private:
  void drive_while_waiting(uint64_t gen, const std::function<bool()>& drive) {
    for (uint32_t polls = 0; drive(); ++polls) {
      for (int i = 0; i < 64; ++i) {
        if (gen_.load(std::memory_order_acquire) != gen) return;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
      if (polls > 1000) sched_yield();  // as MPICH's own progress loop
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  const uint32_t members_;
  uint32_t arrived_ = 0;
  std::atomic<uint64_t> gen_{0};
  Arrival gathering_;  // this round's, under mu_
  Arrival agreed_;     // the last completed round's
};

}  // namespace mpior::replay
