#include "trace/builder.hpp"

#include <catch2/catch.hpp>
#include <random>
#include <sstream>

#include "test/trace/loop_programs.hpp"
#include "trace/arg_setters.hpp"
#include "trace/arg_views.hpp"
#include "trace/cursor.hpp"
#include "trace/format.hpp"
#include "trace/text.hpp"

using namespace mpior::trace;
using mpior::test::first_difference;
using mpior::test::ProgramRunner;
using mpior::test::ProgShape;

namespace {

RawEvent call(Kind kind, uint64_t site, int64_t start, int64_t dur = 10) {
  RawEvent ev;
  ev.kind = kind;
  ev.callsite = site;
  ev.start = start;
  ev.end = start + dur;
  return ev;
}

size_t count_loops(const Stream& s) {
  size_t n = 0;
  for (const Node& node : s.nodes) n += node.loop;
  return n;
}

std::vector<RawEvent> feed(StreamBuilder& b, const std::vector<RawEvent>& events) {
  for (const RawEvent& ev : events) b.append(ev);
  return events;
}

// for i < outer: { open; for j < mid: { write; for k < inner: read } ; sync; close }
std::vector<RawEvent> loop_nest(int outer, int mid, int inner) {
  std::vector<RawEvent> out;
  int64_t t = 0;
  auto add = [&](Kind k, uint64_t site, int64_t off, int64_t count) {
    RawEvent ev = call(k, site, t += 100, 40);
    io_args_mut(ev).handle() = 3;
    io_args_mut(ev).file() = 3;
    io_args_mut(ev).offset() = off;
    io_args_mut(ev).count() = count;
    ev.ret = count;
    t = ev.end;
    out.push_back(ev);
  };
  for (int i = 0; i < outer; ++i) {
    add(Kind::open, 1, -1, -1);
    for (int j = 0; j < mid; ++j) {
      add(Kind::pwrite, 2, int64_t(i) * 1000000 + j * 4096, 4096);
      for (int k = 0; k < inner; ++k) add(Kind::pread, 3, int64_t(j) * 4096 + k * 512, 512);
    }
    add(Kind::fsync, 4, -1, -1);
    add(Kind::close, 5, -1, -1);
  }
  return out;
}

}  // namespace

TEST_CASE("random nested loop programs round-trip through the builder", "[builder]") {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    ProgShape shape;
    shape.noise = seed % 3 == 0 ? 0.02 : 0.0;
    ProgramRunner runner(seed, shape);
    auto prog = runner.make_program();
    auto events = runner.run(prog);
    bool lossless = seed % 2 == 0;
    BuilderOptions opt{lossless};
    if (seed % 5 == 0) opt.fold_pending = 7;  // iterations longer than the buffer
    if (seed % 7 == 0) opt.fold_window = 3;
    StreamBuilder b(opt);
    feed(b, events);
    Stream s = b.snapshot(0, 0);
    INFO("seed " << seed << ", " << events.size() << " events, " << s.nodes.size() << " nodes");
    REQUIRE(first_difference(s, events, lossless) == -1);
    REQUIRE(b.events() == events.size());
  }
}

TEST_CASE("a regular loop nest compresses to its structure", "[builder]") {
  // 40 * 50 * 50 = 100000 reads, 5 call sites, 3 deep.
  auto events = loop_nest(40, 50, 50);
  StreamBuilder b;
  feed(b, events);
  Stream s = b.snapshot(0, 0);
  REQUIRE(s.leaves.size() == 5);
  REQUIRE(count_loops(s) == 3);
  REQUIRE(s.nodes.size() <= 10);
  REQUIRE(s.values.items().size() <= 40);
  REQUIRE(first_difference(s, events, false) == -1);
}

TEST_CASE("timing statistics per position match TimeStats", "[builder]") {
  StreamBuilder b;
  TimeStats gaps, durs;
  int64_t t = 1000, prev_end = 0;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 5000; ++i) {
    int64_t gap = 1000000 + int64_t(rng() % 1000), dur = 50 + int64_t(rng() % 30);
    t += gap;
    RawEvent ev = call(Kind::pwrite, 9, t, dur);
    gaps.add(t - prev_end);
    durs.add(dur);
    prev_end = t += dur;
    b.append(ev);
  }
  Stream s = b.snapshot(0, 0);
  REQUIRE(s.leaves.size() == 1);
  for (auto [got, want] : {std::pair{&s.leaves[0].gap, &gaps}, std::pair{&s.leaves[0].dur, &durs}}) {
    REQUIRE(got->count() == want->count());
    REQUIRE(got->sum() == want->sum());
    REQUIRE(got->min() == want->min());
    REQUIRE(got->max() == want->max());
    REQUIRE(got->mean() == Approx(want->mean()).epsilon(1e-12));
    REQUIRE(got->variance() == Approx(want->variance()).epsilon(1e-9));
    REQUIRE(got->histogram() == want->histogram());
  }
}

TEST_CASE("the tracer's own time is left out of depth-0 gaps", "[builder]") {
  StreamBuilder b;
  RawEvent first = call(Kind::pwrite, 9, 1000, 100);
  RawEvent second = call(Kind::pwrite, 9, 5000, 100);
  second.tracer = 1500;  // recording the first call took 1.5 us of the 3.9 us between them
  RawEvent third = call(Kind::pwrite, 9, 5200, 100);
  third.tracer = 900;  // more than the gap: never negative
  b.append(first);
  b.append(second);
  b.append(third);
  Stream s = b.snapshot(0, 0);
  REQUIRE(s.leaves.size() == 1);
  REQUIRE(s.leaves[0].gap.sum() == 1000 + (5000 - 1100 - 1500) + 0);
  REQUIRE(s.leaves[0].gap.min() == 0);
}

TEST_CASE("memory does not grow with the number of iterations", "[builder]") {
  auto run = [](int iterations) {
    StreamBuilder b;
    int64_t t = 0;
    for (int i = 0; i < iterations; ++i) {
      RawEvent w = call(Kind::pwrite, 1, t += 100, 30);
      io_args_mut(w).offset() = int64_t(i) * 4096;
      io_args_mut(w).count() = 4096;
      w.ret = 4096;
      b.append(w);
      for (int k = 0; k < 3; ++k) b.append(call(Kind::MPI_Barrier, 2, t += 50, 5));
      b.append(call(Kind::fsync, 3, t += 70, 20));
    }
    return std::pair{b.memory_bytes(), b.snapshot(0, 0)};
  };
  auto [small, s1] = run(1000);
  auto [large, s2] = run(1000000);
  REQUIRE(large <= small + 1024);
  REQUIRE(s2.nodes.size() == s1.nodes.size());
  REQUIRE(s2.values.items().size() <= s1.values.items().size() + 2);
}

TEST_CASE("snapshots in the middle of an iteration round-trip, and recording goes on", "[builder]") {
  for (uint64_t seed = 11; seed <= 60; ++seed) {
    ProgShape shape;
    shape.noise = seed % 2 ? 0.03 : 0.0;
    ProgramRunner runner(seed, shape);
    auto prog = runner.make_program();
    auto events = runner.run(prog);
    BuilderOptions opt{true};
    if (seed % 3 == 0) opt.fold_window = 2;  // snapshots fold a copy of only the last few units
    StreamBuilder b(opt);
    for (size_t i = 0; i < events.size(); ++i) {
      b.append(events[i]);
      // Often at first, then now and then: each check expands the whole prefix.
      if ((i < 700 ? i % 7 == 3 : i % 331 == 0) || i + 1 == events.size()) {
        Stream s = b.snapshot(0, 0);
        INFO("seed " << seed << " after " << i + 1 << " events");
        REQUIRE(first_difference(s, events, true, i + 1) == -1);
      }
    }
  }
}

TEST_CASE("a snapshot shows the events of a partly matched iteration as they are", "[builder]") {
  StreamBuilder b;
  int64_t t = 0;
  std::vector<RawEvent> events;
  for (int i = 0; i < 10; ++i)
    for (uint64_t site : {1, 2, 3}) events.push_back(call(Kind::MPI_Barrier, site, t += 100));
  events.push_back(call(Kind::MPI_Barrier, 1, t += 100));
  events.push_back(call(Kind::MPI_Barrier, 2, t += 100));
  feed(b, events);
  Stream mid = b.snapshot(0, 0);
  REQUIRE(first_difference(mid, events, false) == -1);
  REQUIRE(mid.nodes[0].loop);
  REQUIRE(mid.nodes.size() == 6);  // RSD x10 {1 2 3}, then 1 and 2 pending
  // The iteration turns out different: the pending events are kept, then folding goes on.
  events.push_back(call(Kind::MPI_Barrier, 4, t += 100));
  for (int i = 0; i < 5; ++i)
    for (uint64_t site : {1, 2, 3}) events.push_back(call(Kind::MPI_Barrier, site, t += 100));
  feed(b, {events.begin() + 32, events.end()});
  Stream end = b.snapshot(0, 0);
  REQUIRE(first_difference(end, events, false) == -1);
  REQUIRE(count_loops(end) >= 2);
}

TEST_CASE("inner loops with growing trip counts fold, counts kept as strided values", "[builder]") {
  StreamBuilder b;
  std::vector<RawEvent> events;
  int64_t t = 0;
  for (int i = 0; i < 200; ++i) {
    events.push_back(call(Kind::open, 1, t += 10));
    for (int j = 0; j < 2 + i; ++j) events.push_back(call(Kind::write, 2, t += 10));
    events.push_back(call(Kind::close, 3, t += 10));
  }
  feed(b, events);
  Stream s = b.snapshot(0, 0);
  REQUIRE(first_difference(s, events, false) == -1);
  REQUIRE(s.nodes.size() == 5);
  REQUIRE(s.nodes[0].loop);
  REQUIRE(s.nodes[2].loop);
  REQUIRE(seq_expand(s.view(s.nodes[0].iters.seq)) == std::vector<int64_t>{200});
  auto counts = s.view(s.nodes[2].iters.seq);
  REQUIRE(counts.size() == 2);  // 2 + i: one strided run
  REQUIRE(seq_length(counts) == 200);
}

TEST_CASE("inner loops longer than the match buffer still fold", "[builder]") {
  BuilderOptions opt;
  opt.fold_pending = 16;
  StreamBuilder b(opt);
  std::vector<RawEvent> events;
  int64_t t = 0;
  for (int i = 0; i < 50; ++i) {
    events.push_back(call(Kind::open, 1, t += 10));
    for (int j = 0; j < 100; ++j) {
      events.push_back(call(Kind::write, 2, t += 10));
      io_args_mut(events.back()).offset() = j * 10;
    }
  }
  feed(b, events);
  Stream s = b.snapshot(0, 0);
  REQUIRE(first_difference(s, events, false) == -1);
  REQUIRE(s.nodes.size() == 4);  // RSD x50 { open, RSD x100 { write } }
  REQUIRE(seq_expand(s.view(s.nodes[0].iters.seq)) == std::vector<int64_t>{50});
}

TEST_CASE("bodies that differ in a call site or in depth do not fold together", "[builder]") {
  StreamBuilder b;
  std::vector<RawEvent> events;
  int64_t t = 0;
  for (int i = 0; i < 20; ++i) {
    RawEvent a = call(Kind::write, 1, t += 10);
    a.depth = uint8_t(i % 2);
    events.push_back(a);
  }
  feed(b, events);
  Stream s = b.snapshot(0, 0);
  REQUIRE(first_difference(s, events, false) == -1);
  REQUIRE(s.leaves.size() == 2);  // RSD x10 { write, write depth=1 }
  REQUIRE(s.leaves[0].depth != s.leaves[1].depth);
}

TEST_CASE("compressed streams survive the file format and print as RSDs", "[builder][format]") {
  auto events = loop_nest(3, 1000, 0);
  RankTrace t;
  t.process.rank = 2;
  t.process.size = 4;
  t.files = {{"<stdin>", -1}, {"<stdout>", -1}, {"<stderr>", -1}, {"/data/f", 0}};
  StreamBuilder b(BuilderOptions{true});
  feed(b, events);
  t.streams.push_back(b.snapshot(2, 0));
  RankTrace back = decode_rank_trace(encode(t), "mem");
  REQUIRE(back == t);
  EventCursor c(back.streams[0], 2);
  Event ev;
  size_t n = 0;
  while (c.next(ev)) {
    REQUIRE(ev.args == events[n].args);
    REQUIRE(ev.start_ns == events[n].start);
    ++n;
  }
  REQUIRE(n == events.size());
  std::ostringstream text;
  print_stream(text, back.streams[0]);
  REQUIRE_THAT(text.str(), Catch::Contains("RSD x3 {"));
  REQUIRE_THAT(text.str(), Catch::Contains("RSD x1000 {"));
  REQUIRE_THAT(text.str(), Catch::Contains("0+4096*i (x1000)"));
}

// Irregular arguments among regular ones (test/apps/random_io): the loop
// folds, every offset is kept, and the regular arguments stay constants. An
// argument that turns irregular and regular again (the fast row's direct
// columns) keeps every value too.
TEST_CASE("random offsets in a loop keep every value and the rest folds", "[builder]") {
  std::mt19937_64 rng(3);
  std::vector<RawEvent> events;
  int64_t t = 0;
  for (int i = 0; i < 60000; ++i) {
    RawEvent ev = call(i % 2 ? Kind::pwrite : Kind::pread, 20 + uint64_t(i % 2), t += 100, 40);
    io_args_mut(ev).handle() = 3;
    const int phase = (i / 6000) % 4;  // random, strided, random, constant offsets
    io_args_mut(ev).offset() = phase == 1 ? int64_t(i) * 64 : phase == 3 ? 4096 : int64_t(rng() % 16384) * 64;
    io_args_mut(ev).count() = (i / 9000) % 2 ? int64_t(rng() % 3) * 64 + 64 : 64;  // count irregular now and then
    ev.ret = io_args(ev).count();
    t = ev.end;
    events.push_back(ev);
  }
  StreamBuilder b(BuilderOptions{true});
  for (size_t i = 0; i < events.size(); ++i) {
    b.append(events[i]);
    if (i % 7919 == 0) REQUIRE(first_difference(b.snapshot(0, 0), events, true, i + 1) == -1);
  }
  Stream s = b.snapshot(0, 0);
  REQUIRE(first_difference(s, events, true, events.size()) == -1);
  REQUIRE(count_loops(s) == 1);
  REQUIRE(s.leaves.size() == 2);
  for (const Leaf& l : s.leaves) REQUIRE(s.values.view(io_args(l).handle().seq).size() == 1);  // a constant
}

// The tracer folds a chunk at a time (append_all), where a run of one
// repeated call takes its rows as a batch: the stream, times included, is
// the one appending the events one by one gives. Runs of one call site
// whose offset keeps its stride, changes it, jumps, or whose return value
// or errno changes now and then, across batch boundaries.
TEST_CASE("append_all folds runs of one call as append does, event by event", "[builder]") {
  std::mt19937_64 rng(11);
  std::vector<RawEvent> events;
  int64_t t = 0, off = 0, stride = 1;
  for (int i = 0; i < 20000; ++i) {
    const bool other = rng() % 97 == 0;  // another call site breaks the run now and then
    RawEvent ev =
        call(other ? Kind::fsync : Kind::pwrite, other ? 7 : 6, t += int64_t(rng() % 300), 5 + int64_t(rng() % 90));
    t = ev.end;
    const uint64_t r = rng() % 400;
    if (r == 0) stride = int64_t(rng() % 3);  // a new stride (0: the same offset again)
    off = r == 1 ? int64_t(rng() % 100000) : off + stride;
    io_args_mut(ev).handle() = 3;
    io_args_mut(ev).file() = 3;
    io_args_mut(ev).offset() = off;
    io_args_mut(ev).count() = 1;
    ev.ret = r == 2 ? -1 : 1;
    ev.err = r == 2 ? 28 : 0;
    events.push_back(ev);
  }
  for (bool lossless : {false, true}) {
    StreamBuilder one(BuilderOptions{lossless}), all(BuilderOptions{lossless});
    for (const RawEvent& ev : events) one.append(ev);
    for (size_t at = 0; at < events.size(); at += 256)
      all.append_all({events.data() + at, std::min<size_t>(256, events.size() - at)});
    REQUIRE(all.events() == events.size());
    REQUIRE(all.snapshot(0, 0) == one.snapshot(0, 0));
  }
}
