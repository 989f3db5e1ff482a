// The tracer's clock: the TSC where it is invariant (a read costs a fraction
// of a vDSO clock_gettime, and every call takes two), CLOCK_MONOTONIC
// otherwise. Ticks become nanoseconds off the hot path.
#pragma once

#include <x86intrin.h>

#include <cstdint>
#include <ctime>

#include "preload/hot_data.hpp"
#include "trace/tsc.hpp"

namespace mpior::preload::clock {

MPIOR_HOT_EXTERN bool g_use_tsc;

inline int64_t monotonic_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

inline int64_t realtime_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

__attribute__((always_inline)) inline int64_t now() noexcept { return g_use_tsc ? int64_t(__rdtsc()) : monotonic_ns(); }

// Starts the clock (trace start = now). `tsc` requests the TSC; it is used
// only when the CPU reports it constant and non-stop.
void start(bool tsc) noexcept;
// Starts the clock with an earlier trace start: the parent's, in a process a
// traced one started, so both share one time line. The process's own clock
// (the TSC as start's) counts from its own start, offset by how long after
// the parent's it came (CLOCK_MONOTONIC, shared by the node's processes): a
// child on CLOCK_MONOTONIC read it three times a call, a traced `sh run.sh`
// that ran mpirun made every rank such a child.
void start_at(int64_t mono_ns, int64_t real_ns, bool tsc) noexcept;
// Trace start, in CLOCK_MONOTONIC and CLOCK_REALTIME nanoseconds.
int64_t start_monotonic_ns() noexcept;
int64_t start_realtime_ns() noexcept;
// Ticks to nanoseconds since trace start. The first call may wait until the
// TSC has been measured against CLOCK_MONOTONIC over a millisecond.
int64_t to_ns(int64_t ticks) noexcept;
// A length of time in ticks, in nanoseconds.
int64_t duration_ns(int64_t ticks) noexcept;
// to_ns and duration_ns as one value, read once for a batch of records
// (the recorder converts a chunk at a time).
using Scale = trace::TickScale;
// The first call may wait as to_ns's.
Scale scale() noexcept;
// Nanoseconds since trace start, now.
int64_t elapsed_ns() noexcept;

}  // namespace mpior::preload::clock
