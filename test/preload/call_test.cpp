// The intercepted call's bookkeeping of the tracer's own time: what a handler
// does before the real call (restart) and what no clock reading sees (the
// measured residual) leave the program's computation.
#include "preload/call.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <iterator>

#include "preload/call_residual.hpp"
#include "preload/fd_table.hpp"
#include "preload/piggyback/node_array.hpp"
#include "preload/trace_clock.hpp"

using namespace mpior;
using namespace mpior::preload;

namespace {

// Spins until the tracer's clock has moved by at least `ticks`.
void spin_ticks(int64_t ticks) {
  int64_t t0 = clock::now();
  while (clock::now() - t0 < ticks) {
  }
}

struct RecordingOn {
  RecordingOn() {
    clock::start(false);  // CLOCK_MONOTONIC: ticks are nanoseconds
    t_state = ThreadState{};
    g_call_inside_ticks = 0;
    g_recording.store(true);
  }
  ~RecordingOn() {
    g_recording.store(false);
    t_state = ThreadState{};
  }
};

}  // namespace

TEST_CASE("a handler's work before the real call is the tracer's time, not the call's", "[preload][call]") {
  RecordingOn on;
  constexpr int64_t kPreWork = 200'000, kCall = 50'000;  // ns
  Call c(trace::Kind::MPI_Bcast);
  REQUIRE(c.active());
  int64_t first_start = c.ev().start, tracer_before = c.ev().tracer;
  spin_ticks(kPreWork);  // the pruning bookkeeping
  int64_t before_restart = clock::now();
  c.restart();
  spin_ticks(kCall);  // the real call
  c.stop();
  int64_t moved = c.ev().start - first_start;
  CHECK(moved >= kPreWork);
  CHECK(c.ev().tracer == tracer_before + moved);  // the gap before the call stays what it was
  CHECK(c.ev().end - c.ev().start >= kCall);
  CHECK(c.ev().start >= before_restart);  // the call no longer holds the pre-work (whatever preempts the test)
  c.drop();
}

TEST_CASE("a nested call's handler work and recording leave its depth-0 call's duration", "[preload][call]") {
  RecordingOn on;
  constexpr int64_t kPreWork = 10'000, kInner = 5'000, kAfter = 20'000, kOuterOwn = 3'000;  // ns
  int64_t outer_tracer = 0, scope_end = 0;
  {
    int64_t o0 = clock::now(), p0 = 0, p1 = 0, a0 = 0, a1 = 0;
    Call outer(trace::Kind::MPI_File_write);
    {
      Call inner(trace::Kind::pwrite64);
      REQUIRE(inner.ev().depth == 1);
      int64_t start = inner.ev().start;
      p0 = clock::now();
      spin_ticks(kPreWork);  // its handler's work before the real call
      p1 = clock::now();
      inner.restart();
      CHECK(inner.ev().start == start);  // on the depth-0 call's clock, less the tracer's time in it
      CHECK(inner.ev().tracer == 0);     // only depth-0 calls carry the time left out of their gap
      spin_ticks(kInner);                // the real call
      inner.stop();
      CHECK(inner.ev().end - inner.ev().start >= kInner);
      CHECK(inner.ev().end - inner.ev().start <= clock::now() - p1);  // not the pre-work
      a0 = clock::now();
      spin_ticks(kAfter);  // recording it
      a1 = clock::now();
      inner.drop();
    }
    spin_ticks(kOuterOwn);  // the rest of the outer call
    outer.stop();
    int64_t took = outer.ev().end - outer.ev().start;
    CHECK(took >= kInner + kOuterOwn);
    CHECK(took <= clock::now() - o0 - (p1 - p0) - (a1 - a0));  // neither the pre-work nor the recording
    outer.drop();
    outer_tracer = outer.ev().tracer;
    scope_end = clock::now();
  }
  // The next depth-0 call leaves that time out of the gap before it.
  Call next(trace::Kind::write);
  CHECK(next.ev().tracer >= kPreWork + kAfter);
  CHECK(next.ev().tracer - outer_tracer >= kPreWork + kAfter);
  CHECK(next.ev().start - t_state.last_end - next.ev().tracer <= next.ev().start - scope_end);  // none of it
  next.stop();
  next.drop();
}

TEST_CASE("a depth-0 call's duration leaves out its clock readings' own time", "[preload][call]") {
  RecordingOn on;
  constexpr int64_t kInside = 30'000, kCall = 50'000;  // ns
  g_call_inside_ticks = kInside;
  int64_t plain_end = 0, plain_start = 0, scope_end = 0;
  {
    int64_t r0 = clock::now();
    Call c(trace::Kind::write);
    plain_start = c.ev().start;
    spin_ticks(kCall);
    c.stop();
    plain_end = c.ev().end;
    CHECK(c.ev().end - c.ev().start >= kCall - kInside);
    CHECK(c.ev().end - c.ev().start <= clock::now() - r0 - kInside);  // the readings' share moved back
    c.drop();
    scope_end = clock::now();
  }
  {
    Call next(trace::Kind::write);  // the time moved back is the tracer's: the gap stays the program's
    CHECK(next.ev().tracer >= kInside);
    CHECK(next.ev().start - plain_end - next.ev().tracer <= next.ev().start - scope_end);
    next.stop();
    next.drop();
  }
  {
    Call shorter(trace::Kind::write);  // never before its start
    shorter.stop();
    CHECK(shorter.ev().end == shorter.ev().start);
    shorter.drop();
  }
  {
    Call outer(trace::Kind::MPI_File_write);  // with a nested call: both keep it, the nested one ends within
    int64_t inner_end = 0;
    {
      Call inner(trace::Kind::pwrite64);
      spin_ticks(kCall);
      inner.stop();
      inner_end = inner.ev().end;
      CHECK(inner.ev().end - inner.ev().start >= kCall);
      inner.drop();
    }
    outer.stop();
    CHECK(outer.ev().end >= inner_end);
    CHECK(outer.ev().end - outer.ev().start >= kCall);
    outer.drop();
  }
  g_call_inside_ticks = 0;
  CHECK(plain_start > 0);
}

TEST_CASE("the tracer's residual per call is measured and the thread's state restored", "[preload][call]") {
  RecordingOn on;
  t_state.in_tracer = 1;  // the session starts under the tracer's guard
  t_state.tracer_ticks = 1234;
  t_state.last_end = 5678;
  g_call_residual_ticks = -1;
  CallResidual m = measure_call_residual();
  CHECK(g_call_residual_ticks >= 0);
  CHECK(g_call_residual_ticks < 10'000);  // ns: a few dozen instructions, not a system call
  // The larger of the inline loop's figure and the one through ftell (here
  // glibc's: this binary has no wrappers; in libmpior.so its wrapper, the
  // call dropped as its memory stream is not traced).
  CHECK(g_call_residual_ticks == std::max({int64_t(0), m.inline_ticks, m.wrapped_ticks}));
  CHECK(m.inside_ticks > 0);  // a clock reading takes time
  CHECK(m.inside_ticks < 10'000);
  CHECK(g_call_inside_ticks == m.inside_ticks);
  CHECK(t_state.in_tracer == 1);
  CHECK(t_state.tracer_ticks == 1234);
  CHECK(t_state.last_end == 5678);
  CHECK(t_state.depth == 0);
  // Each depth-0 call then leaves it out of the gap before it.
  t_state.in_tracer = 0;
  t_state.tracer_ticks = 100;
  g_call_residual_ticks = 40;
  {
    Call c(trace::Kind::write);
    CHECK(c.ev().tracer == 140);
    c.stop();
    c.drop();
  }
  g_call_residual_ticks = 0;
  // Not while recording is off (a launcher, a forked child): nothing measured.
  g_recording.store(false);
  g_call_residual_ticks = 7;
  CHECK(measure_call_residual().inside_ticks == 0);
  CHECK(g_call_residual_ticks == 7);
  g_call_residual_ticks = 0;
}

TEST_CASE("a fast call's time after its end is read once in 64 calls and estimated between", "[preload][call]") {
  RecordingOn on;
  constexpr int64_t kAfter = 200'000;  // ns of the tracer's work after the first call's end
  // One depth-0 call (dropped: nothing recorded), `after` ns of work before
  // its destructor; the tracer's time it counted after its end.
  auto call = [](bool fast, int64_t after) {
    t_state.tracer_ticks = 0;
    {
      Call c(trace::Kind::write);
      c.stop();
      if (fast) c.mark_fast();
      c.drop();
      spin_ticks(after);
    }
    return t_state.tracer_ticks;
  };
  const int64_t first = call(true, kAfter);  // no estimate yet: read
  CHECK(first >= kAfter);
  CHECK(t_state.after_ticks == first);
  for (int i = 1; i < Call::kSampleEvery; ++i) CHECK(call(true, 0) == first);  // counted, not read
  const int64_t sampled = call(true, 0);  // read again: the estimate moves towards it
  CHECK(sampled < kAfter);
  CHECK(t_state.after_ticks == first + (sampled - first) / 8);
  const int64_t learnt = t_state.after_ticks;
  took_slow_path();
  CHECK(call(true, 0) < kAfter);         // a slow way since the last call: read
  CHECK(call(false, 0) < kAfter);        // not a fast call: read
  CHECK(t_state.after_ticks == learnt);  // neither one a sample
  CHECK(call(true, 0) == learnt);
}

// preload/hot_data.cpp: the globals every recorded call reads lie in one
// page and one 128-byte span, as the shipped build lays them out. A
// sanitizer build instruments and lays its globals out otherwise (TSan put
// padding before the aligned one), so the claim is the plain build's.
TEST_CASE("hot globals share a page", "[preload][call]") {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  WARN("hot globals' layout not checked: a sanitizer build lays globals out otherwise");
  return;
#endif
  const uintptr_t addrs[] = {uintptr_t(&g_recording),
                             uintptr_t(&g_stolen_check_ticks),
                             uintptr_t(&g_gap_check_ticks),
                             uintptr_t(&g_call_residual_ticks),
                             uintptr_t(&g_call_inside_ticks),
                             uintptr_t(&g_fds),
                             uintptr_t(&g_streams),
                             uintptr_t(&clock::g_use_tsc),
                             uintptr_t(&crash::g_due),
                             uintptr_t(&crash::g_pending_signal),
                             uintptr_t(&piggyback::g_io_epoch)};
  const auto [lo, hi] = std::minmax_element(std::begin(addrs), std::end(addrs));
  CHECK(*lo / 4096 == (*hi + 7) / 4096);
  CHECK(*hi - *lo < 128);
}
