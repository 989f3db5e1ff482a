// MPI mode passes the replay's lateness through its barriers as the
// threads' CommBarrier does (set_lateness in sync.hpp). Lateness is how far
// the replay's own dispatch put a rank behind the plan's timeline, time no
// gap absorbed. A barrier releases its members when the last one arrives,
// where the plan's timeline would have released them when the last one
// arrived there (each arrival less its lateness): the members leave as late
// as the latest real arrival is past the latest planned one, and what no
// gap paid back by the end is the replay's, left out of the predicted time.
// Without it a program with no gap between its calls (a small write and a
// Barrier a step) would keep the replay's own dispatch time in MPI mode's
// prediction. The members agree on process 0's clock
// (share_process0_clock), so processes on several nodes compare, in one
// MPI_Allreduce under MPI_MAX of two 32-bit values: the latest planned
// arrival and the latest real one, each taken since the communicator's last
// agreed planned arrival, in 16 ns units (+-34 s: a longer gap paid the
// lateness back anyway); a program's Barrier adds a third (BarrierSpacing).
// The lateness that gives lies between the plan's
// last member's own and that of the member that came last, whatever the
// clocks' offset error (an MPI_MAXLOC of the planned arrival and its
// lateness would pass the plan's last member's on: too little where the
// members' lateness changed their order). A program's Barrier is the
// program's MPI_Barrier, then the agreement (its cost the replay's own:
// MpiThreadOps::barrier_then_agree). Before the collectives whose members
// pass the same byte count the members agree the same way and leave as
// late as they are against the agreed planned arrival, the agreement's cost
// included. v-collectives agree on their byte count instead and pass no
// lateness on. A message carries its sender's lateness in a stamp
// (MessageStamp): a receive that waited for it leaves as late as the
// sender was, as the threads' Channels::wait does. Without it a receiver
// that waited for a late sender paid the wait in real time and kept none of
// its lateness, which then stayed in the prediction.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "replayer/sync.hpp"

namespace mpior::replay {

// Process 0's clock, from its reading at the start (MpiBackend).
struct SharedClock {
  int64_t offset_ns = 0;  // what to add to this process's CLOCK_MONOTONIC readings
  int64_t epoch_ns = 0;   // process 0's reading when the clocks were compared
};

// One member's arrival at a barrier, or the agreed one: when the plan had
// it arrive (process 0's clock less the epoch) and its lateness.
struct Arrival {
  int64_t planned = 0, lateness = 0;
  // A Barrier's: the member's plan had a gap long enough to complete a
  // deferred agreement in since its last Barrier on the communicator.
  bool long_gap = false;
  // Released at the latest real arrival, planned at the latest planned one:
  // the lateness between them (at least the plan's last member's, at most
  // that of the member that came last).
  void latest_with(const Arrival& o) {
    int64_t real = std::max(planned + lateness, o.planned + o.lateness);
    planned = std::max(planned, o.planned);
    lateness = real - planned;
    long_gap = long_gap || o.long_gap;
  }
};

// A communicator's Barriers as agreed (the same on every process): whether
// a member's plan had a gap of MpiOps::kSettleGapNs or more between the
// last two, which defers the next one's agreement
// (MpiThreadOps::barrier_then_agree) into such a gap. Decided on the plan,
// not on the replay's timeline: that holds the measured I/O, so each
// preemption in a replayed write would defer the next Barrier, and the
// agreements' forms would change with the machine's load.
struct BarrierSpacing {
  bool apart = false;
};

// A Barrier's agreement started right after the program's MPI_Barrier (an
// MPI_Iallreduce) and completed in the thread's next long gap, half of it
// slept first, or at the next Barrier (MpiThreadOps::barrier_then_agree,
// settle_agreement). Completed at once, it kept the member that left the
// Barrier first spinning in it: where both processes shared a core (an
// unbound job on two cores, after an fsync), the one it waited for ran only
// at the next scheduler tick, where the program's rank had gone on to
// sleep.
class DeferredAgreement {
 public:
  bool pending() const { return active_; }
  // Starts the agreement of Barrier arrival `a` over comm, whose last
  // agreed planned arrival `since` moves when it completes; `held`: the
  // lateness the thread keeps until then; `spacing` takes the agreed
  // long_gap then. MPI's return code.
  int start(const Arrival& a, int64_t& since, MPI_Comm comm, int64_t held, BarrierSpacing& spacing);
  // Whether it completed (MPI_Test); MPI's return code.
  int test(bool& done);
  // Completes it (tests in a loop, mpi_yield.hpp): `lateness`, what the
  // thread's lateness changes by (the agreed lateness and the start's cost,
  // which the Barrier's replayed time holds, in place of what it held).
  // MPI's return code.
  int finish(int64_t& lateness);

 private:
  MPI_Request req_ = MPI_REQUEST_NULL;
  int32_t units_[3] = {0, 0, 0};
  int64_t* since_ = nullptr;
  BarrierSpacing* spacing_ = nullptr;
  int64_t held_ = 0, cost_ = 0;
  bool active_ = false;  // started, not finished (a completed MPI_Test nulls req_)
};

// The calling thread arriving now, late by its current_lateness.
Arrival arrive(const SharedClock& clock);
// The agreement over comm's processes, in place. `since`: the communicator's
// last agreed planned arrival (the same on every process), moved to this
// one's. A Barrier's (`spacing` given) also agrees on long_gap into
// `spacing`; `as_deferred`: a nonblocking one completed at once,
// which matches the other processes' DeferredAgreement (a blocking
// collective does not match a nonblocking one). MPI's return code.
int agree(Arrival& a, int64_t& since, MPI_Comm comm, BarrierSpacing* spacing = nullptr, bool as_deferred = false);
// After the agreement: the thread leaves as late as it says
// (lateness_after_sync), or with `now` (the replay's own barrier before a
// collective: its cost is the replay's too) as late as it is against the
// agreed planned arrival.
void leave(const Arrival& agreed, const SharedClock* now = nullptr);

// A message's first bytes (the replay pads shorter ones): when its sender
// posted it and when the plan had it posted, on process 0's clock less the
// epoch. The receiver's real arrival and the real post give when the plan
// and the replay meet (the transfer after it is MPI's, the prediction's).
struct MessageStamp {
  int64_t posted = 0, planned = 0;
};
inline constexpr int64_t kStampBytes = sizeof(MessageStamp);
// The calling thread posting a message now, late by its current_lateness.
MessageStamp stamp(const SharedClock& clock);
// A receive that arrived at `entry` (arrive() before it waited) took the
// message stamped `s`: the thread leaves as late as the later of the two was
// against the plan (lateness_after_sync). Returns how long it waited for
// the message to be posted (0: it was there first), which tells a late
// sender from MPI's own cost of the receive.
// As Channels::wait: released when both were there, planned when the plan
// had both there. Inline: the replayer's library leaves MPI out.
inline int64_t received(const Arrival& entry, const MessageStamp& s) {
  int64_t arrived = entry.planned + entry.lateness, released = std::max(arrived, s.posted);
  lateness_agreed(std::max<int64_t>(0, released - std::max(entry.planned, s.planned)));
  return released - arrived;
}

// Collective over MPI_COMM_WORLD: process 0's clock (Cristian's estimate
// from the fastest of a few ping-pongs; offset 0 on process 0).
SharedClock share_process0_clock(int me, int procs);

}  // namespace mpior::replay
