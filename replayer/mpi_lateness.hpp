// MPI mode passes the replay's lateness through its barriers as the
// threads' CommBarrier does (set_lateness in sync.hpp). Lateness is how far
// the replay's own dispatch put a rank behind the plan's timeline, time no
// gap absorbed. A barrier releases its members when the last one arrives,
// where the plan's timeline would have released them when the last one
// arrived there (each arrival less its lateness): the members leave as late
// as the member the plan had arrive last, and what no gap paid back by the
// end is the replay's, left out of the predicted time. Without it a program
// with no gap between its calls (nton_barrier: a 2 KiB write and a Barrier a
// step) kept the replay's 0.3-0.5 us of dispatch a step in MPI mode's
// prediction: +8 to +18% over the real run and the threaded replay.
// The members agree in the Barrier's place, on process 0's clock
// (share_process0_clock), so processes on several nodes compare, in one
// MPI_Allreduce of an MPI_2INT under MPI_MAXLOC: the plan's arrival, as the
// value, and its lateness, as the index. Between two MPICH processes here
// that costs what their Barrier does (1.5-1.6 us a write and a Barrier in
// one state of this VM, 1.8-2.0 in the other), where a MAX of 8 bytes costs
// 0.03-0.15 us more and of 16 bytes 0.3-0.5 more: a step of nton_barrier is
// 3 us. The arrival is taken since the communicator's last agreed one, to
// 16 ns (+-34 s: a longer gap paid the lateness back anyway), the lateness
// rounded to 16 ns (up to 34 s). (The exact release, the last real arrival,
// is later where the members' lateness changed their order.) Before the
// collectives whose members pass the same byte count the members agree the
// same way (the replay's own barrier: it used to agree on the byte count),
// and leave as late as they are against the agreed planned arrival, the
// barrier's cost included. v-collectives agree on their byte count instead
// and pass no lateness on. A message carries its sender's lateness in a
// stamp (MessageStamp): a receive that waited for it leaves as late as the
// sender was, as the threads' Channels::wait does. Without it a receiver
// that waited for a late sender paid the wait in real time and kept none of
// its lateness, which then stayed in the prediction.
#pragma once

#include <mpi.h>

#include <cstdint>

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
  // MPI_MAXLOC's rule: the later planned arrival; of equal ones the least lateness.
  void latest_with(const Arrival& o) {
    if (o.planned > planned || (o.planned == planned && o.lateness < lateness)) *this = o;
  }
};

// The calling thread arriving now, late by its current_lateness.
Arrival arrive(const SharedClock& clock);
// The agreement over comm's processes, in place. `since`: the communicator's
// last agreed planned arrival (the same on every process), moved to this
// one's. MPI's return code.
int agree(Arrival& a, int64_t& since, MPI_Comm comm);
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
// against the plan (lateness_after_sync).
void received(const Arrival& entry, const MessageStamp& s);

// Collective over MPI_COMM_WORLD: process 0's clock (Cristian's estimate
// from the fastest of a few ping-pongs; offset 0 on process 0).
SharedClock share_process0_clock(int me, int procs);

}  // namespace mpior::replay
