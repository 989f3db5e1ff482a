// MPI mode's barriers: the agreement that passes the members' lateness on
// (mpi_lateness.hpp), alone or after the program's own MPI_Barrier.
#include <utility>

#include "replayer/mpi_ops.hpp"
#include "replayer/mpi_watchdog.hpp"

namespace mpior::replay {

// A barrier over c's processes that passes the members' lateness on
// (mpi_lateness.hpp). Before a collective (`own`) the barrier is the
// replay's own: its members leave as late as they are against the plan's
// last arrival, its cost included.
void MpiThreadOps::agreed_barrier(const Comm& c, bool own) {
  MpiComm& mc = b_.comm(c.id);
  settle_before_agreeing();
  Arrival a = arrive(b_.clock());
  mc.meet->agree(
      a,
      [&](Arrival& all) {
        if (!b_.within(c.id)) check(agree(all, mc.agreed_since, mc.msg), "MPI_Allreduce");
      },
      &drive_);
  leave(a, own ? &b_.clock() : nullptr);
}

// The program's Barrier itself first, its members arriving as the plan has
// them, so it costs what the program's did (the agreement alone costs an
// Allreduce's, less than a Barrier's); then the agreement,
// its own cost added to the lateness. Where the communicator's last two
// Barriers held a gap of kSettleGapNs or more in a member's plan (agreed,
// the same on every process, so all take one form: a blocking collective
// matches no nonblocking one), a process that holds one member starts the
// agreement and goes on (DeferredAgreement), keeping its own lateness until
// settle_agreement completes it in a gap, or the next Barrier does; one
// that holds more completes it at once. Closer, it is a blocking
// MPI_Allreduce: a nonblocking one's progress lengthens the replay of a
// program that makes a Barrier every few microseconds.
void MpiThreadOps::barrier_then_agree(const Comm& c) {
  MpiComm& mc = b_.comm(c.id);
  settle_before_agreeing();
  Arrival a = arrive(b_.clock());
  uint64_t& seen = long_gaps_at_barrier_[c.id];
  a.long_gap = std::exchange(seen, long_gaps) != long_gaps;
  if (mc.meet->solo() && mc.barriers.apart) {
    check(MPI_Barrier(mc.msg), "MPI_Barrier");
    check(agreement_.start(a, mc.agreed_since, mc.msg, lateness_held(), mc.barriers), "MPI_Iallreduce");
    return;
  }
  mc.meet->agree(
      a,
      [&](Arrival& all) {
        check(MPI_Barrier(mc.msg), "MPI_Barrier");
        int64_t called = mono_now_ns();
        check(agree(all, mc.agreed_since, mc.msg, &mc.barriers, mc.barriers.apart), "MPI_Allreduce");
        all.lateness += mono_now_ns() - called;
      },
      &drive_);
  leave(a);
}

// Before another agreement, or at the end: the one in flight completes (the
// other members started it long before; no gap long enough came since), its
// time the replay's own.
void MpiThreadOps::settle_before_agreeing() {
  if (!agreement_.pending()) return;
  int64_t lateness = 0, t = mono_now_ns();
  check(agreement_.finish(lateness), "MPI_Testall");
  lateness_changed(lateness + mono_now_ns() - t);
}

void MpiThreadOps::settle_agreement(int64_t gap_end, const std::atomic<bool>& abort, int64_t& lateness) {
  BlockedIn blocked(b_.board(), slot_, trace::Kind::MPI_Wait, 0);
  bool done = false;
  check(agreement_.test(done), "MPI_Test");
  if (!done && gap_end > 0) {
    int64_t now = mono_now_ns();
    idle_until(now + (gap_end - now) / 2, abort);
  }
  check(agreement_.finish(lateness), "MPI_Testall");
}

}  // namespace mpior::replay
