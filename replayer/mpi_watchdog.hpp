// --mpi: a replay that cannot proceed stops, naming the blocked ranks and
// what they wait for, within --stall-timeout (as the threaded replay does).
// A process's replay threads say when they are inside a blocking MPI call
// (WaitBoard); a watchdog thread per process sums, over a communicator of
// its own, how many processes still replay and how many of them got
// anywhere in the last round. When none did for the stall timeout, every
// process lists its blocked threads, rank 0 prints them in one message and
// aborts the job. A process waiting in MPI while another does I/O or
// computes is not stalled: the job as a whole still moves.
#pragma once

#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "trace/kind.hpp"

namespace mpior::replay {

class WaitBoard {
 public:
  // One replay thread's place on the board (registered for its lifetime).
  struct Slot {
    const std::string* who = nullptr;  // "rank 3 thread 0"
    std::atomic<int32_t> kind{-1};     // trace::Kind of the call it is blocked in, -1 none
    std::atomic<uint64_t> event_no{0};
  };
  void add(Slot* s);
  void remove(Slot* s);
  void enter(Slot& s, trace::Kind kind, uint64_t event_no) {
    s.event_no.store(event_no, std::memory_order_relaxed);
    s.kind.store(int32_t(kind), std::memory_order_relaxed);
    in_mpi_.fetch_add(1, std::memory_order_relaxed);
  }
  void leave(Slot& s) {
    s.kind.store(-1, std::memory_order_relaxed);
    in_mpi_.fetch_sub(1, std::memory_order_relaxed);
    ticks_.fetch_add(1, std::memory_order_relaxed);
  }
  int32_t running() const { return running_.load(std::memory_order_relaxed); }
  int32_t in_mpi() const { return in_mpi_.load(std::memory_order_relaxed); }
  uint64_t ticks() const { return ticks_.load(std::memory_order_relaxed); }
  // "rank 0 thread 0 at event #12 (MPI_Recv)", one per blocked thread.
  std::vector<std::string> blocked() const;

 private:
  mutable std::mutex mu_;
  std::vector<Slot*> slots_;
  std::atomic<int32_t> running_{0}, in_mpi_{0};
  std::atomic<uint64_t> ticks_{0};
};

// A blocking MPI call of a replay thread, for the board.
class BlockedIn {
 public:
  BlockedIn(WaitBoard& b, WaitBoard::Slot& s, trace::Kind kind, uint64_t event_no) : b_(b), s_(s) {
    b_.enter(s_, kind, event_no);
  }
  ~BlockedIn() { b_.leave(s_); }
  BlockedIn(const BlockedIn&) = delete;
  BlockedIn& operator=(const BlockedIn&) = delete;

 private:
  WaitBoard& b_;
  WaitBoard::Slot& s_;
};

class MpiWatchdog {
 public:
  // Collective over MPI_COMM_WORLD. No watchdog when stall_s <= 0 or MPI
  // gives less than MPI_THREAD_MULTIPLE (its thread calls MPI beside the
  // replay's).
  MpiWatchdog(const WaitBoard& board, double stall_s, int me, bool thread_multiple);
  // After this process's replay: waits for the others' (the watchdogs end
  // together). Collective.
  void finish();
  // Without finish() (an exception on the way to MPI_Abort): the thread is
  // left to the abort.
  ~MpiWatchdog();

 private:
  void run();
  // sums: processes still replaying, those that moved, those whose timeout ran out.
  bool round(bool out_of_time, int32_t sums[3]);
  [[noreturn]] void stalled();

  const WaitBoard& board_;
  int64_t stall_ns_;
  int me_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable wake_;  // finish() ends the round's nap
  std::atomic<bool> done_{false};
};

}  // namespace mpior::replay
