#include "preload/prune_gap.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>

#include "preload/config.hpp"
#include "preload/piggyback/pruner.hpp"

namespace mpior::preload::mpi {

namespace {

constinit config::Option<int64_t> opt_gap_us{
    "MPIOR_PRUNE_GAP_US", 1000,
    "with pruning, also keep an MPI synchronisation whose call site twice in a row followed at least this much "
    "computation (microseconds since the thread's previous traced call; preempted gaps do not count), and from then "
    "on every time, so the replay makes ranks wait for each other where the run did; 0: only after I/O (thesis 2.1)"};
MPIOR_REGISTER_OPTION(opt_gap_us);

// Call sites by return address, each with how many long gaps in a row it
// followed (kSticky: kept every time from now on). A slot another site takes
// over starts again: a collision only delays the rule. Relaxed atomics:
// pruning is off with MPI_THREAD_MULTIPLE, so threads take turns.
constexpr unsigned kSlots = 256;
constexpr uint32_t kSticky = 2;
struct Site {
  std::atomic<uint64_t> address{0};
  std::atomic<uint32_t> long_gaps{0};
};
Site g_sites[kSlots];

Site& site_of(uint64_t address) {
  uint64_t h = address * 0x9E3779B97F4A7C15ull;
  return g_sites[(h >> 56) % kSlots];
}

// Involuntary context switches of this thread since it last asked: a gap
// that contains one was (perhaps) the scheduler's. Asked only after a long
// gap, so its system call costs under 0.1% of the computation.
thread_local long t_involuntary = -1;
bool preempted_since_last_asked() {
  rusage ru{};
  if (getrusage(RUSAGE_THREAD, &ru) != 0) return true;
  bool preempted = t_involuntary < 0 || ru.ru_nivcsw != t_involuntary;
  t_involuntary = ru.ru_nivcsw;
  return preempted;
}

// Every long gap has had its run-queue wait taken out (stolen_time.hpp)
// before the rule sees it: what remains is the program's, preempted or not.
// Otherwise (oversubscribed ranks, no schedstat) a preempted gap is left
// out whole; on a loaded machine that can be every gap.
bool gaps_left_out_waits() { return g_stolen_check_ticks <= g_long_gap_ticks; }

}  // namespace

void start_gap_rule() noexcept {
  int64_t us = opt_gap_us.get();
  if (us <= 0) return;
  // Ticks per microsecond from the clock's own calibration.
  double ns_per_tick = double(clock::duration_ns(1000000000)) / 1e9;
  g_long_gap_ticks = int64_t(double(us) * 1000.0 / (ns_per_tick > 0 ? ns_per_tick : 1.0));
  g_gap_check_ticks = std::min(g_gap_check_ticks, g_long_gap_ticks);
}

// The start of the call last noted: a Waitall decides once per request it
// completes, the rule once per call.
thread_local int64_t t_noted_start = -1;

void note_computation(const Call& c) noexcept {
  const trace::RawEvent& ev = c.ev();
  if (ev.depth != 0 || ev.start == t_noted_start) return;
  t_noted_start = ev.start;
  bool long_gap = t_state.long_gap;
  t_state.long_gap = 0;
  Site& s = site_of(ev.callsite);
  bool known = s.address.load(std::memory_order_relaxed) == ev.callsite;
  uint32_t runs = known ? s.long_gaps.load(std::memory_order_relaxed) : 0;
  if (runs < kSticky) {
    if (long_gap && !gaps_left_out_waits() && preempted_since_last_asked()) return;  // neither counts nor breaks
    if (!known && !long_gap) return;
    runs = long_gap ? runs + 1 : 0;
    s.address.store(ev.callsite, std::memory_order_relaxed);
    s.long_gaps.store(runs, std::memory_order_relaxed);
  }
  if (runs >= kSticky) piggyback::note_io();
}

}  // namespace mpior::preload::mpi
