#include "preload/stolen_time.hpp"

#include <algorithm>
#include <atomic>

#include "preload/config.hpp"
#include "preload/thread_state.hpp"
#include "preload/trace_clock.hpp"
#include "trace/schedstat.hpp"

namespace mpior::preload::stolen {

namespace {

constinit config::Option<int64_t> opt_check_us{
    "MPIOR_STOLEN_CHECK_US", 500,
    "after a computation or a call at least this long (microseconds), read how long the thread waited for a CPU "
    "(schedstat run_delay) and leave that out of the computation recorded; 0: record wall time as it passed"};
MPIOR_REGISTER_OPTION(opt_check_us);

double g_ticks_per_ns = 1.0;
std::atomic<int64_t> g_left_out_ticks{0};

// The reading before, per thread (-1: none yet), and when it was taken.
thread_local int64_t t_last_delay = -1;
thread_local int64_t t_last_reading_tick = 0;
// What calls left out of the trace (pruned, excluded) waited for a CPU: in
// the computation the trace shows, so left out of the next gap's, but not
// the gap's own wait that pruning's long-gap rule weighs.
thread_local int64_t t_carried_ticks = 0;

// The thread's run-queue wait so far. Its syscall() is a symbol libmpior
// wraps: read as the tracer, not as a call of the program's (a reading in a
// call's constructor would record one nested in it).
int64_t run_delay_ns() noexcept {
  TracerGuard guard;
  return trace::thread_run_delay_ns();
}

// The run-queue wait since the last reading that fell within the last
// `span` ticks of it (a gap, a call), in ticks. Readings are taken only
// after long gaps and calls, so the interval since the last one also holds
// short calls and the tracer's own time (a pruned collective's exchange),
// whose waits are not the span's: only what the rest of the interval cannot
// hold is the span's, never more than it. Counting it all would leave the
// tracer's time, already left out, out of the next gap a second time, and
// with it the program's computation.
int64_t delay_within(int64_t span) noexcept {
  int64_t now = run_delay_ns(), tick = clock::now();
  int64_t since = t_last_delay >= 0 && now >= t_last_delay ? now - t_last_delay : 0;
  int64_t rest = std::max<int64_t>(0, tick - t_last_reading_tick - span);
  t_last_delay = now, t_last_reading_tick = tick;
  return std::clamp<int64_t>(int64_t(double(since) * g_ticks_per_ns) - rest, 0, span);
}

}  // namespace

void start(int ranks_on_node) noexcept {
  int64_t us = opt_check_us.get();
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (us <= 0 || (cpus > 0 && ranks_on_node > cpus) || run_delay_ns() < 0) return;
  double ns_per_tick = double(clock::duration_ns(1000000000)) / 1e9;
  g_ticks_per_ns = ns_per_tick > 0 ? 1.0 / ns_per_tick : 1.0;
  g_stolen_check_ticks = int64_t(double(us) * 1000.0 * g_ticks_per_ns);
  g_gap_check_ticks = std::min(g_gap_check_ticks, g_stolen_check_ticks);
  t_last_delay = run_delay_ns();  // MPI_Init's thread: its first computation counts too
  t_last_reading_tick = clock::now();
}

int64_t leave_out_of_gap(trace::RawEvent& ev, int64_t gap_ticks) noexcept {
  int64_t in_gap = delay_within(gap_ticks);
  int64_t carried = std::clamp<int64_t>(t_carried_ticks, 0, gap_ticks - in_gap);
  t_carried_ticks = 0;
  int64_t now = clock::now(), left_out = in_gap + carried;
  if (left_out > 0) g_left_out_ticks.fetch_add(left_out, std::memory_order_relaxed);
  ev.tracer += left_out + (now - ev.start);
  ev.start = now;
  return in_gap;
}

void reading_after_call(bool recorded, int64_t call_ticks) noexcept {
  int64_t in_call = delay_within(call_ticks);
  if (!recorded) t_carried_ticks += in_call;
}

void reset_after_fork() noexcept {
  g_left_out_ticks.store(0, std::memory_order_relaxed);
  t_carried_ticks = 0;
  t_last_delay = g_stolen_check_ticks == INT64_MAX ? -1 : run_delay_ns();
  t_last_reading_tick = clock::now();
}

int64_t total_ns() noexcept {
  int64_t ticks = g_left_out_ticks.load(std::memory_order_relaxed);
  return ticks > 0 ? clock::duration_ns(ticks) : 0;
}

}  // namespace mpior::preload::stolen
