// The tracer's threads, as in a traced threaded program: application threads
// record into their own recorders while the flush thread (crash.cpp)
// snapshots every recorder. Run under TSan by scripts/sanitize.sh.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "clock.hpp"
#include "cursor.hpp"
#include "recorder.hpp"

using namespace mpior;
using namespace mpior::preload;

TEST_CASE("threads record while another snapshots every recorder", "[preload][recorder][threads]") {
  clock::start(false);
  constexpr int kThreads = 4, kCalls = 20000;
  std::vector<std::unique_ptr<ThreadRecorder>> recorders;
  for (int i = 0; i < kThreads; ++i)
    recorders.push_back(std::make_unique<ThreadRecorder>(uint32_t(i), trace::BuilderOptions{}));
  std::atomic<int> running{kThreads};
  std::vector<std::thread> workers;
  for (int i = 0; i < kThreads; ++i)
    workers.emplace_back([&, i] {
      ThreadRecorder& r = *recorders[size_t(i)];
      for (int n = 0; n < kCalls; ++n) {
        trace::RawEvent ev;
        ev.kind = n % 3 ? trace::Kind::write : trace::Kind::lseek;
        ev.args[trace::arg::count] = 4096;
        ev.start = clock::now();
        ev.end = ev.start + 100;
        ev.ret = 4096;
        r.record(ev);
      }
      running.fetch_sub(1);
    });
  uint64_t snapshots = 0, seen_max = 0;
  while (running.load() > 0 || snapshots == 0) {
    for (auto& r : recorders) {
      trace::Stream s = r->snapshot(0);
      trace::EventCursor c(s, 0);
      trace::Event ev;
      uint64_t n = 0;
      while (c.next(ev)) ++n;
      seen_max = std::max(seen_max, n);
      REQUIRE(n <= r->events());
    }
    ++snapshots;
  }
  for (auto& w : workers) w.join();
  for (auto& r : recorders) {
    REQUIRE(r->events() == uint64_t(kCalls));
    trace::Stream s = r->snapshot(0);
    trace::EventCursor c(s, 0);
    trace::Event ev;
    uint64_t n = 0;
    while (c.next(ev)) ++n;
    REQUIRE(n == uint64_t(kCalls));
  }
  REQUIRE(snapshots > 0);
}
