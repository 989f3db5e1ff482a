#include "clock.hpp"

#include <time.h>

#include <algorithm>
#include <catch2/catch.hpp>

using namespace mpior::replay;

TEST_CASE("deadlines follow the previous event's end plus the traced gap", "[clock]") {
  Pacer p(1000, 1.0);
  REQUIRE(p.deadline_for(500) == 1500);
  p.mark_end(2000);
  REQUIRE(p.deadline_for(0) == 2000);
  REQUIRE(p.deadline_for(-7) == 2000);  // a negative gap (clock noise in the trace) is no gap
  REQUIRE(p.debt() == 0);
}

TEST_CASE("oversleeping becomes debt that later gaps pay off", "[clock]") {
  Pacer p(0, 1.0);
  int64_t d = p.deadline_for(1000);
  p.woke_at(d, d + 300);  // woke 300 ns late
  REQUIRE(p.debt() == 300);
  p.mark_end(d + 400);
  REQUIRE(p.deadline_for(1000) == d + 400 + 700);
  REQUIRE(p.debt() == 0);
  SECTION("a gap smaller than the debt pays what it can") {
    p.woke_at(0, 5000);
    REQUIRE(p.debt() == 5000);
    p.mark_end(10'000);
    REQUIRE(p.deadline_for(2000) == 10'000);
    REQUIRE(p.debt() == 3000);
  }
  SECTION("waking on time adds nothing") {
    p.woke_at(100, 100);
    p.woke_at(100, 50);
    REQUIRE(p.debt() == 0);
  }
}

TEST_CASE("a collective member woken late: its delay past the cost is debt that costs and gaps pay", "[clock]") {
  Pacer p(0, 1.0);
  p.add_debt(-5);  // woke on time: nothing
  REQUIRE(p.debt() == 0);
  p.add_debt(8000);                             // woke 8 us after MPI would have left
  REQUIRE(p.deadline_after(100, 1000) == 100);  // the next collective's cost is paid out of it
  REQUIRE(p.debt() == 7000);
  p.mark_end(500);
  REQUIRE(p.deadline_for(10'000) == 500 + 3000);
  REQUIRE(p.debt() == 0);
}

TEST_CASE("--compute-scale multiplies every gap", "[clock]") {
  Pacer half(0, 0.5);
  REQUIRE(half.deadline_for(1000) == 500);
  Pacer none(0, 0.0);
  REQUIRE(none.deadline_for(1'000'000'000) == 0);
  Pacer twice(100, 2.0);
  REQUIRE(twice.deadline_for(1000) == 2100);
}

TEST_CASE("sleep_until never wakes before its deadline and gives up on abort", "[clock]") {
  std::atomic<bool> abort{false};
  int64_t deadline = mono_now_ns() + 2'000'000;
  REQUIRE(sleep_until(deadline, abort) >= deadline);
  REQUIRE(sleep_until(deadline - 1'000'000'000, abort) >= deadline);  // already past: returns at once
  abort = true;
  int64_t far = mono_now_ns() + 3600'000'000'000;
  REQUIRE(sleep_until(far, abort) < far);
}

TEST_CASE("the replay's clock reads CLOCK_MONOTONIC, also through the TSC", "[clock]") {
  start_clock();
  auto real = [] {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  };
  int64_t worst = 0, prev = mono_now_ns();
  for (int i = 0; i < 200'000; ++i) {
    int64_t before = real(), ours = mono_now_ns(), after = real();
    // Within the bracket, give or take the anchor's drift (a few ns) and a
    // preemption between the reads.
    worst = std::max({worst, before - ours, ours - after});
    REQUIRE(ours >= prev - 1'000);  // a re-anchoring may step back by its drift, never by more
    prev = ours;
  }
  INFO("worst distance outside the bracket: " << worst << " ns");
  REQUIRE(worst < 20'000);
}
