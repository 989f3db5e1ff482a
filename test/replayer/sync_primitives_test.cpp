#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "replayer/pacing_clock.hpp"
#include "replayer/sync.hpp"

using namespace mpior::replay;

namespace {

constexpr int64_t kClockSkewNs = 2'000;

// Members meet `rounds` times. Before each arrival a member counts itself in
// and notes when; after the barrier it checks that every member was counted
// in, and that the release it was told of came after every arrival of the
// round and is the one every other member was told of.
void meet(uint32_t members, int64_t spin_ns, int rounds) {
  Progress progress(members, 20);
  CommBarrier barrier(members, spin_ns);
  const auto n = static_cast<size_t>(rounds);
  std::vector<std::atomic<uint32_t>> arrivals(n);
  std::vector<std::atomic<int64_t>> latest_arrival(n), release(n);
  std::atomic<int> failures{0}, not_ok{0};
  auto member = [&] {
    for (int r = 0; r < rounds; ++r) {
      int64_t now = mono_now_ns();
      int64_t seen = latest_arrival[size_t(r)].load();
      while (seen < now && !latest_arrival[size_t(r)].compare_exchange_weak(seen, now)) {
      }
      arrivals[size_t(r)].fetch_add(1);
      if (barrier.wait(progress, "member") != WaitResult::ok) ++not_ok;
      if (arrivals[size_t(r)].load() != members) ++failures;
      int64_t released = last_release_ns();
      // Each thread's clock is its own anchor plus TSC ticks (replayer/pacing_clock.hpp):
      // readings on two threads may disagree by a few ns.
      if (released + kClockSkewNs < latest_arrival[size_t(r)].load()) ++failures;
      int64_t expected = 0;
      if (!release[size_t(r)].compare_exchange_strong(expected, released) && expected != released) ++failures;
    }
  };
  std::vector<std::thread> threads;
  for (uint32_t i = 0; i < members; ++i) threads.emplace_back(member);
  for (auto& t : threads) t.join();
  REQUIRE(not_ok == 0);
  REQUIRE(failures == 0);
  REQUIRE(!progress.is_aborted());
}

}  // namespace

// Polling members never outnumber the cores (poll_ns): more would spin on
// the cores the last member needs, a scheduler tick a round. Where they
// would, the members poll briefly, then sleep.
TEST_CASE("a polling barrier lets no member through before every member arrived, round after round", "[barrier]") {
  const unsigned cores = std::thread::hardware_concurrency();
  meet(2, cores >= 2 ? 100'000'000 : 20'000, 20000);
  meet(4, cores >= 4 ? 100'000'000 : 20'000, 5000);
}

TEST_CASE("a sleeping barrier (more members than cores) misses no wake-up", "[barrier]") {
  meet(16, 0, 500);
  meet(3, 0, 5000);
}

// One FUTEX_WAKE releases every sleeper at once: a member woken for round r
// may arrive for round r+1 while others of round r still leave.
TEST_CASE("256 sleeping members meet round after round, with or without a short poll", "[barrier]") {
  meet(256, 0, 200);
  meet(256, 20'000, 100);
}

TEST_CASE("wake_all releases every member, asleep or yet to arrive", "[barrier]") {
  constexpr uint32_t kMembers = 64;
  Progress progress(kMembers, 20);
  CommBarrier barrier(kMembers + 1, 0);  // one member never comes
  std::atomic<int> aborted{0};
  std::vector<std::thread> threads;
  for (uint32_t i = 0; i < kMembers; ++i)
    threads.emplace_back([&] { aborted += barrier.wait(progress, "member") == WaitResult::aborted; });
  barrier.wake_all();
  for (auto& t : threads) t.join();
  REQUIRE(aborted == int(kMembers));
}

TEST_CASE("wake_all releases a member while it polls, not after its polling time", "[barrier]") {
  Progress progress(2, 20);
  CommBarrier barrier(2, 30'000'000'000);  // 30 s of polling
  auto t0 = std::chrono::steady_clock::now();
  std::thread waiter([&] { REQUIRE(barrier.wait(progress, "member") == WaitResult::aborted); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  barrier.wake_all();
  waiter.join();
  REQUIRE(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
  REQUIRE(barrier.wait(progress, "late member") == WaitResult::aborted);
}

TEST_CASE("a thread's cached channels are its replay's, one at a time and more than the cache holds", "[channels]") {
  for (int replay = 0; replay < 3; ++replay) {  // one instance after another, maybe at one address
    Progress progress(1, 0.2);
    Channels ch(progress, 1);
    constexpr int kKeys = 40;  // more than a thread's cache
    for (int i = 0; i < kKeys; ++i) ch.post(ChannelKey{0, 0, 1, i});
    ch.post(ChannelKey{0, 0, 1, 7});
    for (int i = 0; i < kKeys; ++i) REQUIRE(ch.wait(ChannelKey{0, 0, 1, i}, "receiver") == WaitResult::ok);
    REQUIRE(ch.wait(ChannelKey{0, 0, 1, 7}, "receiver") == WaitResult::ok);
    // Every message taken: the next wait is a stall, whatever an earlier
    // replay's channel of the same key held.
    REQUIRE(ch.wait(ChannelKey{0, 0, 1, 3}, "receiver") == WaitResult::stalled);
  }
}

TEST_CASE("a receive is released when its message was posted, or at its entry when the message came first",
          "[channels]") {
  const ChannelKey key{0, 0, 1, 5};
  SECTION("message first") {
    Progress progress(2, 5);
    Channels ch(progress, 2);
    ch.post(key);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    int64_t before = mono_now_ns();
    clear_last_release();
    REQUIRE(ch.wait(key, "receiver") == WaitResult::ok);
    REQUIRE(last_release_ns() >= before);
    REQUIRE(last_release_ns() <= mono_now_ns());
    REQUIRE_FALSE(last_wait_slept());
  }
  for (int64_t delay_ms : {1, 150}) {  // within the receiver's polling (100 ms), and past it (it sleeps)
    DYNAMIC_SECTION("receiver first, the message " << delay_ms << " ms later") {
      Progress progress(2, 5);
      Channels ch(progress, 2);
      std::atomic<int64_t> before_post{0}, after_post{0};
      std::thread sender([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        before_post = mono_now_ns();
        ch.post(key);
        after_post = mono_now_ns();
      });
      clear_last_release();
      REQUIRE(ch.wait(key, "receiver") == WaitResult::ok);
      int64_t back = mono_now_ns();
      sender.join();
      REQUIRE(last_release_ns() + kClockSkewNs >= before_post.load());
      REQUIRE(last_release_ns() <= after_post.load() + kClockSkewNs);
      REQUIRE(last_release_ns() <= back + kClockSkewNs);
      if (delay_ms > 100 && std::thread::hardware_concurrency() >= 2) CHECK(last_wait_slept());
    }
  }
}

TEST_CASE("a tick on any thread is progress", "[progress]") {
  Progress progress(4, 20);
  uint64_t seen = progress.ticks();
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&] { progress.tick(); });
  for (auto& t : threads) t.join();
  REQUIRE(progress.ticks() == seen + 4);
}

namespace {
constexpr int64_t kMs = 1'000'000;

// Two members meet once: each arrives `delay_ms` after the start, `lateness_ms` behind the plan's timeline.
struct LateMeeting {
  int64_t left[2] = {-1, -1};   // the lateness each leaves with
  int64_t arrived[2] = {0, 0};  // when each went into the barrier
  int64_t lateness[2] = {0, 0};
  // What the barrier must pass on, from the arrivals as they happened (a
  // sleep on a busy machine overshoots; the rule does not depend on it):
  // the last real arrival less the latest planned one.
  int64_t expected() const {
    return std::max<int64_t>(
        0, std::max(arrived[0], arrived[1]) - std::max(arrived[0] - lateness[0], arrived[1] - lateness[1]));
  }
};

LateMeeting meet_late(std::pair<int, int> delay_ms, std::pair<int, int> lateness_ms) {
  Progress progress(2, 5);
  CommBarrier barrier(2, 100'000'000);
  LateMeeting m;
  std::atomic<int> not_ok{0};  // Catch's assertions are the main thread's
  auto member = [&](int i, int delay, int lateness) {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    m.lateness[i] = lateness * kMs;
    set_lateness(m.lateness[i]);
    m.arrived[i] = mono_now_ns();
    if (barrier.wait(progress, "member") != WaitResult::ok) ++not_ok;
    m.left[i] = lateness_after_sync();
  };
  std::thread other(member, 1, delay_ms.second, lateness_ms.second);
  member(0, delay_ms.first, lateness_ms.first);
  other.join();
  REQUIRE(not_ok == 0);
  return m;
}

// The barrier reads its own clock on arrival, a moment after the member's.
constexpr int64_t kArrivalSlackNs = 3 * kMs;
}  // namespace

TEST_CASE("a collective passes the lateness of the member that held it to every member", "[barrier][lateness]") {
  SECTION("the last arriver was late by the replay's own time: both leave as late") {
    LateMeeting m = meet_late({40, 0}, {30, 0});  // planned: 10 ms and 0; released at 40 instead of 10
    CHECK(m.expected() > 0);
    CHECK(std::abs(m.left[0] - m.expected()) < kArrivalSlackNs);
    CHECK(m.left[1] == m.left[0]);
  }
  SECTION("a late member that waited anyway absorbed its lateness") {
    LateMeeting m = meet_late({0, 40}, {30, 0});  // the other held it, on time
    CHECK(m.left[0] >= 0);
    CHECK(std::abs(m.left[0] - m.expected()) < kArrivalSlackNs);
    CHECK(m.left[1] == m.left[0]);
  }
  SECTION("only the part of the last arriver's lateness the plan would not have waited anyway") {
    // planned: 10 ms and 25: released 15 ms late. A sleep that overshoots by
    // 15 ms on a busy machine makes member 1 early enough to pass all 30 ms,
    // another case: meet again until the arrivals are this one.
    LateMeeting m = meet_late({40, 25}, {30, 0});
    for (int again = 0; again < 20 && m.expected() >= m.lateness[0]; ++again) m = meet_late({40, 25}, {30, 0});
    REQUIRE(m.expected() < m.lateness[0]);
    CHECK(std::abs(m.left[0] - m.expected()) < kArrivalSlackNs);
    CHECK(m.left[1] == m.left[0]);
  }
  set_lateness(0);
  CHECK(lateness_after_sync() == -1);  // nothing synchronised since
}

TEST_CASE("a receive leaves as late as the later of the receiver and the message", "[channels][lateness]") {
  const ChannelKey key{0, 0, 1, 7};
  Progress progress(2, 5);
  Channels ch(progress, 2);
  SECTION("the sender, 30 ms late, held the receiver") {
    std::thread sender([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
      set_lateness(30 * kMs);
      ch.post(key);
    });
    set_lateness(0);
    REQUIRE(ch.wait(key, "receiver") == WaitResult::ok);
    sender.join();
    CHECK(lateness_after_sync() > 25 * kMs);
    CHECK(lateness_after_sync() < 35 * kMs);
  }
  SECTION("the message was there first: the receiver keeps its own lateness") {
    set_lateness(0);
    ch.post(key);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    set_lateness(10 * kMs);
    REQUIRE(ch.wait(key, "receiver") == WaitResult::ok);
    CHECK(lateness_after_sync() == 10 * kMs);
  }
}
