#include "preload/recorder.hpp"

#include <dlfcn.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <thread>

#include "preload/callsite.hpp"
#include "preload/config.hpp"
#include "preload/trace_clock.hpp"
#include "trace/cursor.hpp"
#include "trace/spill_reader.hpp"

using namespace mpior;
using namespace mpior::preload;

namespace {
trace::RawEvent event(trace::Kind k, uint8_t depth, int64_t start, int64_t end) {
  trace::RawEvent ev;
  ev.kind = k;
  ev.depth = depth;
  ev.start = start;
  ev.end = end;
  return ev;
}
}  // namespace

TEST_CASE("a call's record goes before the records of calls made inside it", "[preload][recorder]") {
  clock::start(false);
  ThreadRecorder r(0, {});
  int64_t t = clock::now();
  // Inner calls finish first: pwrite (depth 2) inside write (depth 1) inside MPI_Send (depth 0).
  auto inner = event(trace::Kind::pwrite, 2, t + 20, t + 30);
  auto middle = event(trace::Kind::write, 1, t + 10, t + 40);
  auto sibling = event(trace::Kind::close, 1, t + 50, t + 60);
  auto outer = event(trace::Kind::MPI_Send, 0, t, t + 100);
  r.record(inner);
  r.record(middle);
  r.record(sibling);
  r.record(outer);
  trace::Stream s = r.snapshot(0);
  trace::EventCursor c(s, 0);
  trace::Event ev;
  std::vector<std::pair<trace::Kind, int>> got;
  while (c.next(ev)) got.emplace_back(ev.kind, ev.depth);
  REQUIRE(got ==
          std::vector<std::pair<trace::Kind, int>>{
              {trace::Kind::MPI_Send, 0}, {trace::Kind::write, 1}, {trace::Kind::pwrite, 2}, {trace::Kind::close, 1}});
}

TEST_CASE("snapshots see everything recorded so far and recording goes on", "[preload][recorder]") {
  clock::start(false);
  ThreadRecorder r(3, {});
  int64_t t = clock::now();
  for (int i = 0; i < 1000; ++i) {
    auto ev = event(trace::Kind::write, 0, t + 10 * i, t + 10 * i + 5);
    r.record(ev);
  }
  REQUIRE(r.events() == 1000);
  trace::Stream s = r.snapshot(7);
  REQUIRE(s.thread == 3);
  REQUIRE(s.rank_list() == std::vector<int64_t>{7});
  auto ev = event(trace::Kind::close, 0, t + 20000, t + 20001);
  r.record(ev);
  REQUIRE(r.events() == 1001);
}

TEST_CASE("call-site signatures are stable and tell sites apart", "[preload][callsite]") {
  CallsiteCache cache;
  uint64_t here = reinterpret_cast<uint64_t>(&dlsym);
  uint64_t there = reinterpret_cast<uint64_t>(&clock::elapsed_ns);
  REQUIRE(cache.signature(here, 1) == cache.signature(here, 1));
  REQUIRE(cache.signature(here, 1) != cache.signature(there, 1));
  REQUIRE(cache.signature(here + 4, 1) != cache.signature(here, 1));
}

TEST_CASE("options parse their values and reject bad ones", "[preload][config]") {
  config::Option<bool> b{"MPIOR_TEST_B", false, "test"};
  config::Option<int64_t> n{"MPIOR_TEST_N", 3, "test"};
  config::Option<std::string_view> s{"MPIOR_TEST_S", "stats", "test", "stats|lossless"};
  REQUIRE(b.parse("yes"));
  REQUIRE(b.get());
  REQUIRE_FALSE(b.parse("maybe"));
  REQUIRE(b.get());
  REQUIRE(n.parse("0x10"));
  REQUIRE(n.get() == 16);
  REQUIRE_FALSE(n.parse("12abc"));
  REQUIRE(s.parse("lossless"));
  REQUIRE(s.get() == "lossless");
  REQUIRE_FALSE(s.parse("exact"));
  REQUIRE(s.get() == "lossless");
  std::string all = config::describe_all();
  for (const char* name : {"MPIOR_TRACE_DIR", "MPIOR_EXCLUDE", "MPIOR_TIMING", "MPIOR_STACK_DEPTH", "MPIOR_LOG"})
    REQUIRE_THAT(all, Catch::Contains(name));
}

namespace {

// pwrites at random offsets: the irregular calls that fold slowest.
struct RandomWrites {
  explicit RandomWrites(ThreadRecorder& rec) : r(rec) {}
  ThreadRecorder& r;
  int64_t t = clock::now();
  uint64_t x = 88172645463325252ull;
  std::vector<int64_t> offsets;

  void record(int n) {
    for (int i = 0; i < n; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      auto ev = event(trace::Kind::pwrite, 0, t + 10 * int64_t(offsets.size()), t + 10 * int64_t(offsets.size()) + 5);
      ev.args[trace::arg::offset] = int64_t(x % 100000) * 64;
      offsets.push_back(ev.args[trace::arg::offset]);
      r.record(ev);
    }
  }
  // `all` holds every call recorded, once, in order.
  void require_all_in(const trace::Stream& all) const {
    trace::EventCursor c(all, 0);
    trace::Event ev;
    size_t i = 0;
    while (c.next(ev)) {
      REQUIRE(i < offsets.size());
      REQUIRE(ev.args[trace::arg::offset] == offsets[i++]);
    }
    REQUIRE(i == offsets.size());
  }
};

}  // namespace

TEST_CASE("a recorder's folded part taken out (spill) and its rest hold every event once", "[preload][recorder]") {
  clock::start(false);
  ThreadRecorder r(2, {});
  RandomWrites w(r);
  w.record(40000);
  REQUIRE(r.spill_before_flush(64 << 10, false));  // irregular: over 64 KiB and grown since the last flush
  REQUIRE(r.spill_pending());
  trace::FoldedPart part = r.take_folded();
  REQUIRE(!r.spill_pending());
  REQUIRE(part.events() > 39000);
  REQUIRE(!r.spill_before_flush(64 << 10, true));  // the rest is small
  w.record(1000);
  trace::Stream all = part.finish(0, 2);
  trace::append_stream(all, r.snapshot(0));
  w.require_all_in(all);
}

TEST_CASE("under the crash journal's frequent flushes a folded part that grew at all spills", "[preload][recorder]") {
  clock::start(false);
  // The same irregular calls into two recorders, flushed every 5,000 calls
  // from 50,000 on (folded size grows with the calls: 40,000 more do not
  // double it): eager spills, the doubling rule does not.
  ThreadRecorder eager(3, {}), plain(4, {});
  RandomWrites we(eager), wp(plain);
  we.record(50000);
  wp.record(50000);
  REQUIRE(!eager.spill_before_flush(size_t(1) << 40, true));  // below the size: only the size is noted
  REQUIRE(!plain.spill_before_flush(size_t(1) << 40, false));
  bool spilled = false;
  for (int i = 0; i < 8 && !spilled; ++i) {
    we.record(5000);
    wp.record(5000);
    spilled = eager.spill_before_flush(64 << 10, true);
    REQUIRE(!plain.spill_before_flush(64 << 10, false));
  }
  REQUIRE(spilled);
  REQUIRE(eager.spill_pending());
  REQUIRE(!plain.spill_pending());
  REQUIRE(!eager.spill_before_flush(64 << 10, true));  // no growth since that flush
  trace::FoldedPart part = eager.take_folded();
  REQUIRE(part.events() > 54000);
}

TEST_CASE("folding behind: another thread folds the chunks the recording thread parks", "[preload][recorder]") {
  clock::start(false);
  ThreadRecorder r(5, {});
  set_fold_behind(true, true);  // whatever the cores
  std::atomic<bool> done{false};
  int folds = 0;
  std::thread folder([&] {
    while (!done.load())
      if (r.fold_wanted())
        r.fold_parked(), ++folds;
      else
        std::this_thread::yield();
  });
  RandomWrites w(r);
  w.record(100000);
  done.store(true);
  folder.join();
  set_fold_behind(false);
  REQUIRE(folds > 0);  // the recording thread woke the folder
  REQUIRE(r.events() == 100000);
  w.require_all_in(r.snapshot(0));
}
