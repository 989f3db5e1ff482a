// The time-stamp counter as a clock: usable where the CPU says it ticks at
// one rate on every core and in every power state. The tracer and the
// replayer read it instead of CLOCK_MONOTONIC: a read costs about a third of
// a vDSO clock_gettime, and both read a clock at every call.
#pragma once

#include <cstdint>

namespace mpior::trace {

// constant_tsc and nonstop_tsc in /proc/cpuinfo's flags. Reads a file: call
// once, at start-up.
bool cpu_has_invariant_tsc();

// A CLOCK_MONOTONIC reading and the TSC in the middle of it: of `tries`
// readings each bracketed by two TSC reads, the tightest. The TSC's rate is
// measured between two such pairs; one interrupted between its reads would
// skew it, and a skewed rate moves every later event of a short-lived
// process, which calibrates over little time.
struct MonotonicTsc {
  int64_t mono_ns = 0;
  double tsc = 0;
};
MonotonicTsc monotonic_with_tsc(int tries = 8) noexcept;

// The tracer's clock readings as nanoseconds since its trace start: ticks
// of the TSC at ns_per_tick, or CLOCK_MONOTONIC nanoseconds (tsc false).
// Read once for a batch of records: the builder converts a record's times
// as it folds it (StreamBuilder::append_ticks).
struct TickScale {
  bool tsc = false;
  int64_t start_ticks = 0;
  int64_t offset_ns = 0;
  double ns_per_tick = 1.0;
  int64_t to_ns(int64_t ticks) const noexcept { return tsc ? to_ns_as<true>(ticks) : to_ns_as<false>(ticks); }
  int64_t duration_ns(int64_t ticks) const noexcept {
    return tsc ? duration_ns_as<true>(ticks) : duration_ns_as<false>(ticks);
  }
  // The same where the caller knows tsc (a loop over a batch).
  template <bool Tsc>
  int64_t to_ns_as(int64_t ticks) const noexcept {
    if constexpr (Tsc) return offset_ns + int64_t(double(ticks - start_ticks) * ns_per_tick);
    return ticks - start_ticks + offset_ns;
  }
  template <bool Tsc>
  int64_t duration_ns_as(int64_t ticks) const noexcept {
    if constexpr (Tsc) return int64_t(double(ticks) * ns_per_tick);
    return ticks;
  }
};

}  // namespace mpior::trace
