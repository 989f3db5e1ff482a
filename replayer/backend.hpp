// What a replay thread does with MPI events, and who runs the replay: the
// threads of one process synchronising among themselves (MpiReplay, the
// default), or real MPI processes each holding a block of ranks (--mpi,
// mpi_mode.cpp). The engine walks the plan the same way for both.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "replayer/final_sizes.hpp"
#include "replayer/pacing_clock.hpp"
#include "trace/event.hpp"
#include "trace/model.hpp"

namespace mpior::replay {

class Channels;
class ErrorLog;
class IoReplay;
struct Target;

class MpiOps {
 public:
  virtual ~MpiOps() = default;
  // A depth-0 MPI event; false when the replay stopped.
  virtual bool replay(const trace::Event& ev, uint64_t event_no) = 0;
  // A completion record under a Wait/Test.
  virtual bool complete(const trace::Event& ev, uint64_t event_no) = 0;
  // A member record under a root's Reduce/Gather.
  virtual bool member(const trace::Event& ev, uint64_t event_no) = 0;
  // A neighbour record under the call that made a communicator with a topology.
  virtual void topology(const trace::Event&) {}
  // A collective MPI-IO call replayed at the POSIX level: its members meet.
  virtual bool file_barrier(const trace::Event& ev, uint64_t event_no) = 0;
  // MPI-IO issued through MPI_File_* (MPI mode): the bytes moved.
  virtual bool native_mpiio() const { return false; }
  virtual int64_t mpiio(const trace::Event&) { return 0; }
  virtual void mpiio_block(const trace::Event&) {}
  // Before each depth-0 event (a view waits for its blocks) and at the end.
  virtual void settle() {}
  virtual void finish() {}
  // A compute gap, until `deadline`; returns when it woke. MPI mode first
  // drives the sends the program had completed: MPI moves a rendezvous only
  // inside MPI calls, which the program's blocking Gather was and a sleeping
  // replay thread is not (a root would wait a member's whole gap for each
  // rendezvous-sized contribution).
  virtual int64_t idle_until(int64_t deadline, const std::atomic<bool>& abort) { return sleep_until(deadline, abort); }
  // MPI mode: a Barrier's agreement is in flight (mpi_lateness.hpp).
  virtual bool agreement_pending() const { return false; }
  // Completes it within a gap of at least kSettleGapNs that ends at
  // `gap_end`, half of it slept first unless it is complete (the partner's
  // core freed), or at once (`gap_end` 0: the end). `lateness`: what the
  // thread's lateness changes by. Otherwise the next Barrier completes it.
  static constexpr int64_t kSettleGapNs = 100'000;  // a shorter sleep wakes that late (QueuedWake::kMinGapNs)
  virtual void settle_agreement(int64_t, const std::atomic<bool>&, int64_t&) {}
  // Depth-0 events whose plan gap was kSettleGapNs or more, so far (the
  // engine counts them; MPI mode decides the Barriers' forms with them).
  uint64_t long_gaps = 0;
  // MPI mode: a depth-0 call that stays within this process (messages
  // between two of its ranks, a collective of its ranks alone), which it
  // replays as the threads do: the engine charges its calibrated cost.
  virtual bool local(const trace::Event&) const { return false; }
  // MPI mode: no completion under the last Wait/Test left this process (or
  // it had none, a Test that found nothing): MPI mode made no MPI call for
  // it, and the engine charges the Wait's cost, as the threads' replay does.
  virtual bool completions_local() const { return false; }
  // Of the receives' waits, the time before their message was posted (a
  // late sender), where the rest is the transfer's own cost: MPI mode's
  // receives from other processes (their stamps say); 0 elsewhere.
  virtual int64_t sender_wait_ns() const { return 0; }
};

// Real MPI under the replay (mpi_mode.cpp); null in ReplayOptions for threads alone.
class Backend {
 public:
  virtual ~Backend() = default;
  // This process replays that plan rank.
  virtual bool replays(int32_t rank) const = 0;
  // `local`: the channels of this process's threads, for messages between its ranks.
  virtual std::unique_ptr<MpiOps> ops(int32_t rank, ErrorLog& errors, IoReplay& io, const Target& target,
                                      const std::string& who, Channels& local) = 0;
  // The replay threads of every process on this node: a thread waiting
  // for another of its process may poll only while each has a core.
  virtual uint32_t node_threads() const = 0;
  // Prepares the target: process 0 first, then the others (the same
  // directory, or one per node).
  virtual void in_turn(const std::function<void()>& setup) = 0;
  // Every process's threads are ready: the common start (after a barrier).
  virtual void all_ready() = 0;
  // After the replay, on every process: process 0 gets every process's
  // logs (its own first) and checks the files; the others get none.
  virtual std::vector<SizeLog> gather_size_logs(const std::vector<const SizeLog*>& mine) = 0;
  // A thread failed: no MPI partner will ever answer; stops the job.
  [[noreturn]] virtual void fatal(const std::string& why) = 0;
};

}  // namespace mpior::replay
