#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <time.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <thread>

#include "replayer/pacing_clock.hpp"
#include "trace/schedstat.hpp"

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

TEST_CASE("a lateness agreed late changes the debt either way; a gap's end is seen without paying", "[clock]") {
  Pacer p(1000, 2.0);
  p.add_debt(3000);
  REQUIRE(p.gap_end(1000) == 1000);  // 2000 ns of gap, all of it paid out of the debt
  REQUIRE(p.debt() == 3000);         // ... only when the deadline is taken
  p.change_debt(-1000);              // agreed less late than it held
  REQUIRE(p.gap_end(1000) == 1000);
  REQUIRE(p.gap_end(2000) == 1000 + 4000 - 2000);
  p.change_debt(-5000);  // never below none
  REQUIRE(p.debt() == 0);
  p.change_debt(700);  // agreed later than it held
  int64_t seen = p.gap_end(1000);
  REQUIRE(seen == 1000 + 2000 - 700);
  REQUIRE(p.deadline_for(1000) == seen);
  REQUIRE(p.debt() == 0);
  REQUIRE(p.gap_end(-3) == 1000);
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

TEST_CASE("a wake-up below the thresholds or without readings is not looked at", "[clock]") {
  int64_t now = mono_now_ns(), woke = now + 5'000'000;
  QueuedWake unread(false, now, now + 1'000'000);
  REQUIRE(unread.queued(now + 1'000'000, woke) == 0);
  QueuedWake short_gap(true, now, now + QueuedWake::kMinGapNs - 1);
  REQUIRE(short_gap.queued(now + QueuedWake::kMinGapNs - 1, woke) == 0);
  QueuedWake on_time(true, now, now + 1'000'000);
  int64_t prompt = now + 1'000'000 + QueuedWake::kMinLateNs - 1;
  REQUIRE(on_time.queued(now + 1'000'000, prompt) == 0);
  REQUIRE(woke == now + 5'000'000);  // nothing read, nothing moved
}

namespace {
struct Semaphore {
  sem_t s;
  Semaphore() { sem_init(&s, 0, 0); }
  ~Semaphore() { sem_destroy(&s); }
  void post() { sem_post(&s); }
  void wait() {
    while (sem_wait(&s) != 0) {
    }
  }
};

void spin_ns(int64_t ns) {
  for (int64_t end = mono_now_ns() + ns; mono_now_ns() < end;) {
  }
}
}  // namespace

// A real run-queue wait: a real-time thread on the same CPU holds it from
// 0.2 ms to 3.2 ms; the sleeper's timer fires at 1 ms and it waits ~2.2 ms.
TEST_CASE("a sleeper held on the run queue past its deadline: that wait is the target's, not debt", "[clock]") {
  cpu_set_t all, one;
  REQUIRE(sched_getaffinity(0, sizeof all, &all) == 0);
  CPU_ZERO(&one);
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &all)) {
      CPU_SET(c, &one);
      break;
    }
  if (mpior::trace::thread_run_delay_ns() < 0) {
    WARN("no /proc/thread-self/schedstat here: not checked");
    return;
  }
  int64_t queued = -1, late = -1;
  bool realtime = true;
  std::thread sleeper([&] {
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    Semaphore ready, go;
    std::thread hog([&] {
      pthread_setaffinity_np(pthread_self(), sizeof one, &one);
      sched_param sp{};
      sp.sched_priority = 1;
      realtime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
      ready.post();
      go.wait();
      if (!realtime) return;
      timespec pause{0, 200'000};
      nanosleep(&pause, nullptr);
      spin_ns(3'000'000);
    });
    ready.wait();
    std::atomic<bool> abort{false};
    int64_t now = mono_now_ns(), deadline = now + 1'000'000;
    QueuedWake wake(true, now, deadline);
    go.post();
    if (realtime) {
      int64_t woke = sleep_until(deadline, abort);
      queued = wake.queued(deadline, woke);
      late = woke - deadline;
    }
    hog.join();
  });
  sleeper.join();
  if (!realtime) {
    WARN("no SCHED_FIFO here (not root): not checked");
    return;
  }
  INFO("woke " << late << " ns late, " << queued << " ns of it on the run queue");
  REQUIRE(late >= 1'500'000);
  REQUIRE(queued >= 1'000'000);
  REQUIRE(queued <= late);
}
