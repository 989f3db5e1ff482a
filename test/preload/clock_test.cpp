// The tracer's clock in a process a traced one started: its own clock (the
// TSC, or CLOCK_MONOTONIC) counted from the parent's trace start.
#include <catch2/catch.hpp>

#include "preload/trace_clock.hpp"
#include "trace/tsc.hpp"

using namespace mpior::preload;

namespace {

void spin_monotonic_ns(int64_t ns) {
  int64_t t0 = clock::monotonic_ns();
  while (clock::monotonic_ns() - t0 < ns) {
  }
}

}  // namespace

TEST_CASE("a child's clock counts from its parent's trace start") {
  for (bool tsc : {false, true}) {
    CAPTURE(tsc);
    constexpr int64_t kBefore = 5'000'000;  // the parent started tracing 5 ms before this process
    int64_t parent_mono = clock::monotonic_ns() - kBefore, parent_real = clock::realtime_ns() - kBefore;
    clock::start_at(parent_mono, parent_real, tsc);
    CHECK(clock::g_use_tsc == (tsc && mpior::trace::cpu_has_invariant_tsc()));  // no longer CLOCK_MONOTONIC always
    CHECK(clock::start_monotonic_ns() == parent_mono);
    CHECK(clock::start_realtime_ns() == parent_real);
    // Each reading between two of CLOCK_MONOTONIC, which say where it must fall.
    int64_t m0 = clock::monotonic_ns(), first = clock::now(), m1 = clock::monotonic_ns();
    spin_monotonic_ns(2'000'000);
    int64_t m2 = clock::monotonic_ns(), second = clock::now(), m3 = clock::monotonic_ns();
    int64_t at = clock::to_ns(first), later = clock::to_ns(second);
    constexpr int64_t kSlack = 50'000;  // the TSC's rate measured over a millisecond or more
    CHECK(at >= m0 - parent_mono - kSlack);
    CHECK(at <= m1 - parent_mono + kSlack);
    CHECK(later >= m2 - parent_mono - kSlack);
    CHECK(later <= m3 - parent_mono + kSlack);
    CHECK(at >= kBefore);
    CHECK(clock::duration_ns(second - first) == Approx(double(later - at)).epsilon(0.001));
    CHECK(clock::elapsed_ns() >= later);
  }
  clock::start(false);  // as the other tests left it
}

TEST_CASE("a CLOCK_MONOTONIC reading comes with the TSC in the middle of it") {
  if (!mpior::trace::cpu_has_invariant_tsc()) return;
  for (int tries : {1, 8}) {
    CAPTURE(tries);
    int64_t m0 = clock::monotonic_ns();
    double t0 = double(__rdtsc());
    mpior::trace::MonotonicTsc a = mpior::trace::monotonic_with_tsc(tries);
    double t1 = double(__rdtsc());
    int64_t m1 = clock::monotonic_ns();
    CHECK(a.mono_ns >= m0);  // each field the reading it names, taken between these
    CHECK(a.mono_ns <= m1);
    CHECK(a.tsc >= t0);
    CHECK(a.tsc <= t1);
    spin_monotonic_ns(2'000'000);
    mpior::trace::MonotonicTsc b = mpior::trace::monotonic_with_tsc(tries);
    CHECK(b.mono_ns - a.mono_ns >= 2'000'000);
    CHECK(b.tsc > a.tsc);
  }
}
