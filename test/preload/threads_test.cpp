// The tracer's threads, as in a traced threaded program: application threads
// record into their own recorders while the flush thread (crash.cpp)
// snapshots every recorder. Run under TSan by scripts/sanitize.sh.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "preload/recorder.hpp"
#include "preload/trace_clock.hpp"
#include "trace/cursor.hpp"

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

namespace {

// The offsets of random_io's calls, known to the test in advance.
std::vector<int64_t> random_offsets(size_t n) {
  std::vector<int64_t> out(n);
  uint64_t x = 88172645463325252ull;
  for (auto& o : out) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    o = int64_t(x % 16384) * 64;
  }
  return out;
}

// Records offsets[from, to) (to = 0: all).
void record_offsets(ThreadRecorder& r, const std::vector<int64_t>& offsets, size_t from = 0, size_t to = 0) {
  for (size_t n = from; n < (to ? to : offsets.size()); ++n) {
    trace::RawEvent ev;
    ev.kind = n % 2 ? trace::Kind::pwrite : trace::Kind::pread;
    ev.callsite = 0x1000 + n % 2;
    ev.args[trace::arg::offset] = offsets[n];
    ev.args[trace::arg::count] = ev.ret = 64;
    ev.start = clock::now();
    ev.end = ev.start + 100;
    r.record(ev);
  }
}

// The offsets of a stream's events, checked against the calls' in order from
// `from`; returns how many events it holds.
size_t check_prefix(const trace::Stream& s, const std::vector<int64_t>& offsets, size_t from) {
  trace::EventCursor c(s, 0);
  trace::Event ev;
  size_t n = 0;
  while (c.next(ev)) {
    REQUIRE(from + n < offsets.size());
    if (ev.args[trace::arg::offset] != offsets[from + n]) FAIL("event " << from + n << ": offset differs");
    ++n;
  }
  return n;
}

}  // namespace

// Snapshots freeze the builder while the thread goes on recording into its
// backlog (recorder.hpp): each snapshot holds the calls made before it, in
// order, with every offset, and none is lost or repeated when the builder
// is handed back.
TEST_CASE("snapshots of a thread recording irregular calls hold a prefix of its calls",
          "[preload][recorder][threads]") {
  clock::start(false);
  const std::vector<int64_t> offsets = random_offsets(150000);
  ThreadRecorder r(0, trace::BuilderOptions{});
  std::atomic<bool> done{false};
  std::thread app([&] {
    record_offsets(r, offsets);
    done.store(true);
  });
  size_t last = 0, snapshots = 0;
  while (!done.load() || snapshots < 3) {
    const uint64_t before = r.events();
    trace::Stream s = r.snapshot(0);
    const size_t n = check_prefix(s, offsets, 0);
    REQUIRE(n >= before);  // every call recorded before the snapshot began
    REQUIRE(n >= last);
    REQUIRE(n <= r.events());
    if (snapshots % 4 == 1) REQUIRE(r.memory_bytes() > 0);  // a measure freezes the builder too
    last = n;
    ++snapshots;
  }
  app.join();
  REQUIRE(check_prefix(r.snapshot(0), offsets, 0) == offsets.size());
}

// The memory cap's path from another thread (preload/spill_writer.cpp): folded parts taken
// out while the thread records, then the rest, hold every call once, in order.
TEST_CASE("folded parts taken while a thread records hold every call once", "[preload][recorder][threads]") {
  clock::start(false);
  const std::vector<int64_t> offsets = random_offsets(120000);
  ThreadRecorder r(1, trace::BuilderOptions{});
  std::atomic<bool> done{false};
  std::atomic<size_t> taken{0};
  std::thread app([&] {
    record_offsets(r, offsets, 0, offsets.size() / 2);
    while (taken.load() < 2) std::this_thread::yield();  // at least two parts taken while it records
    record_offsets(r, offsets, offsets.size() / 2);
    done.store(true);
  });
  std::vector<trace::Stream> parts;
  while (!done.load()) {
    parts.push_back(r.take_folded().finish(0, 1));
    taken.store(parts.size());
    if (parts.size() % 3 == 0) (void)r.snapshot(0);  // snapshots in between
    std::this_thread::sleep_for(std::chrono::microseconds(300));
  }
  app.join();
  parts.push_back(r.snapshot(0));
  size_t n = 0;
  for (const trace::Stream& s : parts) n += check_prefix(s, offsets, n);
  REQUIRE(n == offsets.size());
  REQUIRE(parts.size() > 2);
}
