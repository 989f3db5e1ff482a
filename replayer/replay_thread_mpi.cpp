// A replay thread's MPI calls: the synchronisation MpiOps reproduces, and
// what a call costs beyond it (CommCosts, calibrated from the plan).
#include <algorithm>
#include <utility>

#include "replayer/replay_thread.hpp"

namespace mpior::replay {

// A thread that went on after the last member arrived, or after the message
// it waited for was posted (polling, a wake-up), spent that much of the cost
// already: MPI polls, and its own hand-off is in the cost (a receive charged
// in full on top of the replay's hand-off made a ping-pong 2.5x its traced
// time).
void ReplayThread::charge_after_sync(int64_t cost) {
  count_cost(cost);
  int64_t released = last_release_ns(), late = released > 0 ? std::max<int64_t>(0, last_end_ - released) : 0;
  if (cost > late) {
    last_end_ = charge(last_end_, cost - late);
  } else if (late > cost) {  // later than MPI would have gone on: the replay's own delay
    pacer_.add_debt(late - cost);
    summary.late_ns += late - cost;
  }
}

// Before the gap to the next event (`next`; none: the end): a Barrier's
// agreement in flight (mpi_lateness.hpp) completes within a long gap, and
// its lateness replaces what the thread kept meanwhile.
void ReplayThread::settle_agreement(const trace::Event* next, MpiOps& mpi) {
  if (!mpi.agreement_pending()) return;
  int64_t lateness = 0, gap_end = next ? pacer_.gap_end(next->gap_ns) : 0;
  if (next && gap_end - mono_now_ns() < MpiOps::kSettleGapNs) return;
  mpi.settle_agreement(gap_end, sh_.progress.aborted(), lateness);
  pacer_.change_debt(lateness);
}

// At the next depth-0 event (after_sync) or at the end of the stream.
void ReplayThread::pay_owed(MpiOps& mpi, bool after_sync) {
  int64_t cost = std::exchange(owed_, 0);
  if (cost <= 0 || (sh_.opt.backend && !mpi.completions_local())) return;
  if (after_sync) return charge_after_sync(cost);
  count_cost(cost);
  last_end_ = charge(last_end_, cost);
}

// Semaphores and barriers reproduce the waiting; what a call costs beyond it
// is charged before a send posts and after every other call's
// synchronisation (a Wait's after its completions). Calls without a cost
// class (communicator creation, Finalize) take at least their floor
// (CommCosts::floor_ns). A member that woke later than the last arrival plus
// the cost owes the difference as pacer debt. In MPI mode real MPI costs
// what it costs, but for two kinds of call: the root of a Reduce or Gather
// whose members' calls pruning dropped receives nothing from them, and takes
// at least the call's cost, else it would run short; and calls that stay
// within the process (MpiOps::local: messages between two of its ranks,
// collectives of its ranks alone) synchronise as the threads' do and are
// charged as theirs are.
bool ReplayThread::mpi_call(const trace::Event& ev, uint64_t event_no, MpiOps& mpi, int64_t start) {
  trace::OpClass op = ev.op();
  bool waits = op == trace::OpClass::wait || op == trace::OpClass::test;
  bool backend = sh_.opt.backend != nullptr;
  bool pruned_root = backend && !sh_.opt.io_only && CommCosts::pruned_root(ev);
  bool mpi_costs = backend && !pruned_root && !waits && !mpi.local(ev);  // MPI's own
  bool uncharged = sh_.opt.io_only || mpi_costs;
  int64_t cost = uncharged ? 0 : sh_.costs.cost(sh_.plan, ev);
  int64_t from = start;
  if (cost > 0 && CommCosts::charged_before(op)) {
    count_cost(cost);
    from = charge(start, std::exchange(cost, 0));
  }
  last_end_ = from;
  clear_last_release();
  bool going = waiting([&] { return mpi.replay(ev, event_no); });
  if (!going || uncharged) return going;
  if (waits) {
    owed_ = cost;  // pay_owed: MPI mode knows whether it stayed local after the completions
  } else if (CommCosts::charged(op) && !pruned_root) {
    summary.slept_waits += last_wait_slept();
    charge_after_sync(cost);
  } else {
    int64_t floor = pruned_root ? cost : sh_.costs.floor_ns(sh_.plan, ev, stream_.leaves[ev.leaf].dur);
    if (pruned_root) count_cost(cost);
    if (floor > 0 && last_end_ < start + floor) last_end_ = charge(last_end_, start + floor - last_end_);
  }
  return going;
}

}  // namespace mpior::replay
