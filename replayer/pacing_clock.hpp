// Compute gaps as sleeps against absolute deadlines (CLOCK_MONOTONIC). A
// sleep that overshoots leaves a debt that later gaps pay off, so wake-up
// latency does not accumulate over millions of events.
#pragma once

#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace mpior::replay {

namespace clock_detail {
// Nanoseconds per TSC tick, measured once by start_clock(); 0: every read is
// a clock_gettime.
// Atomic: a thread started before start_clock (MPI mode's watchdog) may read
// them while it writes (relaxed loads: plain moves).
inline std::atomic<double> g_ns_per_tick{0};
inline std::atomic<uint64_t> g_anchor_ticks{0};  // how long an anchor serves
// A thread's last CLOCK_MONOTONIC reading and the TSC at it.
struct Anchor {
  int64_t tsc = 0;
  int64_t ns = 0;
};
inline thread_local Anchor t_anchor;
int64_t clock_monotonic_ns();
int64_t reanchor();
}  // namespace clock_detail

// Picks the replay's clock, once per process, before any replay thread
// starts: the TSC where it is invariant (the clock is read after every
// replayed call, and a TSC read costs a fraction of a vDSO clock_gettime).
void start_clock();

// CLOCK_MONOTONIC nanoseconds. With the TSC: the thread's last real reading
// (taken again every 100 us, so a rate measured over 2 ms cannot drift by more
// than a few ns) plus the ticks since, scaled.
inline int64_t mono_now_ns() {
  using namespace clock_detail;
  double per_tick = g_ns_per_tick.load(std::memory_order_relaxed);
  if (per_tick == 0) return clock_monotonic_ns();
  uint64_t ticks = __rdtsc() - uint64_t(t_anchor.tsc);
  // Also when this core's TSC reads behind the anchor's.
  if (ticks >= g_anchor_ticks.load(std::memory_order_relaxed)) return reanchor();
  return t_anchor.ns + int64_t(double(ticks) * per_tick);
}

// The deadline arithmetic, free of any clock so it can be checked exactly.
class Pacer {
 public:
  Pacer(int64_t start_ns, double compute_scale) : prev_end_(start_ns), scale_(compute_scale) {}

  // The previous replayed event ended at t.
  void mark_end(int64_t t) { prev_end_ = t; }
  // When the next event should start, given its traced gap; pays debt first.
  int64_t deadline_for(int64_t gap_ns);
  // The same without paying: where the gap would end with the debt as it is.
  int64_t gap_end(int64_t gap_ns) const;
  // When a cost charged from `from` ends; pays debt first.
  int64_t deadline_after(int64_t from, int64_t cost_ns) {
    int64_t pay = std::min(debt_, cost_ns);
    debt_ -= pay;
    return from + cost_ns - pay;
  }
  // A sleep to `deadline` woke at `woke`: late wake-ups become debt.
  void woke_at(int64_t deadline, int64_t woke) {
    if (woke > deadline) debt_ += woke - deadline;
  }
  // Time the replay lost to its own mechanics (a member woken late from a
  // collective, past its cost) is paid off like a late sleep.
  void add_debt(int64_t ns) { debt_ += std::max<int64_t>(0, ns); }
  // A lateness agreed late (a Barrier's deferred agreement) replaces the
  // part of the debt it was agreed in place of: either way.
  void change_debt(int64_t ns) { debt_ = std::max<int64_t>(0, debt_ + ns); }
  int64_t debt() const { return debt_; }
  // A synchronisation passed lateness on (set_lateness in sync.hpp).
  void set_debt(int64_t ns) { debt_ = std::max<int64_t>(0, ns); }

 private:
  int64_t paced(int64_t gap_ns) const;  // the gap as replayed (--compute-scale), 0 for none
  int64_t prev_end_;
  double scale_;
  int64_t debt_ = 0;
};

// Sleeps until the absolute monotonic deadline, in slices so that an abort
// is noticed within a second; returns the time it woke.
int64_t sleep_until(int64_t deadline_ns, const std::atomic<bool>& abort);

// How long the calling thread has waited on a run queue for a CPU (ns;
// schedstat's run_delay, as the tracer reads it), 0 where not known: the
// report sets the replay's against the traced run's.
int64_t thread_cpu_wait_ns();

// A compute gap's late wake-up, split: the part the target's run queue held
// the thread (schedstat run_delay across the sleep) stays in the replay, as
// the program waits there too (the tracer left the traced run's own waits
// out of the gap: the replay adds the target's); the rest is the replay's own
// timer latency, paid back as debt. Read only around sleeps of at least
// kMinGapNs, where the replay's threads fit the CPUs (oversubscribed threads
// wait for each other, not for the file system's kernel threads).
class QueuedWake {
 public:
  static constexpr int64_t kMinGapNs = 100'000, kMinLateNs = 10'000;
  QueuedWake(bool readable, int64_t now, int64_t deadline)
      : before_(readable && deadline - now >= kMinGapNs ? thread_cpu_wait_ns() : -1) {}
  // How much of the wake-up at `woke` past `deadline` was run-queue wait;
  // `woke` moves past the reading (its cost is the replay's, paid back).
  int64_t queued(int64_t deadline, int64_t& woke) const {
    if (before_ < 0 || woke - deadline < kMinLateNs) return 0;
    int64_t waited = thread_cpu_wait_ns() - before_;
    woke = mono_now_ns();
    return std::clamp<int64_t>(waited, 0, woke - deadline);
  }

 private:
  int64_t before_;
};

// Sleep precision for the calling thread: 1 ns of timer slack instead of 50 µs.
void tighten_timer_slack();

}  // namespace mpior::replay
