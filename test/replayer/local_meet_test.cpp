#include "replayer/local_meet.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "replayer/sync.hpp"

using namespace mpior::replay;

namespace {
// The meeting's other member, arriving after `ms`; the clock starts before it does.
std::thread arrive_late(LocalMeet& meet, int ms) {
  return std::thread([&meet, ms] {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    meet.run([] {});
  });
}
}  // namespace

TEST_CASE("local meet: every member leaves with its round's agreed arrival", "[local_meet]") {
  constexpr uint32_t kMembers = 4;
  constexpr int kRounds = 3000;
  LocalMeet meet(kMembers);
  std::atomic<int> calls{0}, wrong{0};
  std::vector<std::thread> members;
  for (uint32_t m = 0; m < kMembers; ++m)
    members.emplace_back([&, m] {
      for (int r = 0; r < kRounds; ++r) {
        // The latest planned arrival is member 2's; the call sees it too.
        Arrival mine{int64_t(r) * 10 + (m == 2 ? 5 : int64_t(m)), int64_t(m)};
        meet.agree(mine, [&](Arrival& all) {
          ++calls;
          if (all.planned != int64_t(r) * 10 + 5) ++wrong;
        });
        // A member that left first opens the next round at once: the others
        // must still leave with this one's.
        if (mine.planned != int64_t(r) * 10 + 5 || mine.lateness != 2) ++wrong;
      }
    });
  for (auto& t : members) t.join();
  CHECK(calls == kRounds);
  CHECK(wrong == 0);
}

TEST_CASE("local meet: a waiting member drives until the last arrives or driving stops", "[local_meet]") {
  LocalMeet meet(2);
  std::atomic<int> drives{0};
  std::function<bool()> drive = [&] {
    ++drives;
    return true;
  };
  auto start = std::chrono::steady_clock::now();
  std::thread late = arrive_late(meet, 30);
  meet.run([] {}, &drive);
  auto waited = std::chrono::steady_clock::now() - start;
  late.join();
  CHECK(waited >= std::chrono::milliseconds(30));
  CHECK(drives > 10);

  // Driving that is no longer worth it: one call, then the member sleeps.
  int once = 0;
  std::function<bool()> nothing = [&] {
    ++once;
    return false;
  };
  std::thread late2 = arrive_late(meet, 10);
  meet.run([] {}, &nothing);
  late2.join();
  CHECK(once == 1);
}

TEST_CASE("arrivals agreed: released at the last real arrival, planned at the last planned one", "[local_meet]") {
  // Member b was planned before a, but its lateness made it arrive last:
  // the barrier releases when b arrives (120), the plan at a's arrival (100).
  Arrival a{100, 5}, b{90, 30};
  Arrival ab = a, ba = b;
  ab.latest_with(b);
  ba.latest_with(a);
  CHECK(ab.planned == 100);
  CHECK(ab.lateness == 20);
  CHECK(ba.planned == ab.planned);
  CHECK(ba.lateness == ab.lateness);
  // The plan's last member also came last: its own lateness.
  Arrival c{100, 5}, d{90, 10};
  c.latest_with(d);
  CHECK(c.planned == 100);
  CHECK(c.lateness == 5);
}

TEST_CASE("a receive from a late sender waits for it and leaves as late as the sender was", "[local_meet]") {
  // The receiver arrived at 100 (planned 100, on time); the message was posted
  // at 150 by a sender 30 late (planned 120): it waited 50 and leaves 30 late.
  set_lateness(0);
  CHECK(received(Arrival{100, 0}, MessageStamp{150, 120}) == 50);
  CHECK(lateness_held() == 30);
  // The message was there first (posted 80): no wait for the sender, and the
  // receiver keeps its own lateness, not the sender's.
  set_lateness(0);
  CHECK(received(Arrival{100, 7}, MessageStamp{80, 40}) == 0);
  CHECK(lateness_held() == 7);
}
