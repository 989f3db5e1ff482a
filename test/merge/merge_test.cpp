// Cross-rank merge: hand-built ranks through analyze and build_plan, checked
// with check_plan (every rank and thread reads back its own events from the
// merged plan) after a round trip through the plan file format.
#include "merge/merge.hpp"

#include <fcntl.h>

#include <catch2/catch.hpp>
#include <sstream>

#include "merge/merge_params.hpp"
#include "postproc/analyze.hpp"
#include "postproc/merge_check.hpp"
#include "postproc/plan.hpp"
#include "postproc/post.hpp"
#include "test/postproc/fixture.hpp"
#include "trace/arg_views.hpp"
#include "trace/format.hpp"
#include "trace/text.hpp"
#include "trace/tool_error.hpp"

using namespace mpior;
using namespace mpior::test;
using Catch::Matchers::Contains;
using trace::Kind;
namespace arg = trace::arg;

namespace {

struct Planned {
  postproc::TraceSet set;
  trace::Plan plan;
};

Planned plan_of(std::vector<trace::RankTrace> ranks) {
  Planned p{make_set(std::move(ranks)), {}};
  postproc::Analysis a = postproc::analyze(p.set);
  p.plan = trace::decode_plan(trace::encode(postproc::build_plan(p.set, a)), "plan");
  REQUIRE(postproc::check_plan(p.set, p.plan, "plan") > 0);
  return p;
}

std::vector<int64_t> iota(int64_t from, int64_t to, int64_t step = 1) {
  std::vector<int64_t> v;
  for (int64_t r = from; r < to; r += step) v.push_back(r);
  return v;
}

const trace::Leaf& leaf_of(const trace::Stream& s, Kind k) {
  for (const trace::Leaf& l : s.leaves)
    if (l.kind == k) return l;
  FAIL("no " << trace::name(k) << " position");
  throw;
}

const trace::Node& first_loop(const trace::Stream& s) {
  for (const trace::Node& n : s.nodes)
    if (n.loop) return n;
  FAIL("no loop");
  throw;
}

const std::vector<trace::RankVariant>& variants(const trace::Stream& s, const trace::Param& p) {
  REQUIRE(p.ranked >= 0);
  return s.ranked[size_t(p.ranked)];
}

size_t ranked_params(const trace::Stream& s) {
  size_t n = 0;
  for (const trace::Node& node : s.nodes) n += node.iters.ranked >= 0;
  for (const trace::Leaf& l : s.leaves) {
    for (const trace::Param& p : l.args) n += p.ranked >= 0;
    n += (l.ret.ranked >= 0) + (l.err.ranked >= 0) + (l.exact_gap.ranked >= 0) + (l.exact_dur.ranked >= 0);
  }
  return n;
}

std::string text_of(const trace::Stream& s) {
  std::ostringstream o;
  trace::print_stream(o, s);
  return o.str();
}

void close_file(RankBuilder& b, int32_t file, int64_t fd) {
  b.call(Kind::close, {{arg::handle, fd}, {arg::file, file}});
}

// Every rank: open file_<rank>, `iters` times pwrite at rank*S + i*N*S and a
// barrier, close. Durations differ by rank so timing statistics merge.
std::vector<trace::RankTrace> spmd(int32_t size, int iters, int64_t block) {
  std::vector<trace::RankTrace> out;
  for (int32_t r = 0; r < size; ++r) {
    RankBuilder b(r, size);
    int32_t f = b.file("/out/file_" + std::to_string(r));
    b.open(f, 3, O_CREAT | O_WRONLY, 3);
    for (int i = 0; i < iters; ++i) {
      b.call(Kind::pwrite,
             {{arg::handle, 3}, {arg::file, f}, {arg::offset, r * block + i * size * block}, {arg::count, block}},
             block, 1000 + r);
      b.collective(Kind::MPI_Barrier, 0);
    }
    close_file(b, f, 3);
    out.push_back(b.finish());
  }
  return out;
}

}  // namespace

TEST_CASE("identical ranks merge into one stream without variants", "[postproc][merge]") {
  std::vector<trace::RankTrace> ranks;
  for (int32_t r = 0; r < 8; ++r) {
    RankBuilder b(r, 8);
    int32_t f = b.file("/in/shared");
    b.open(f, 3, O_RDONLY, 3);
    for (int i = 0; i < 10; ++i) b.pread(f, 3, 4096 * i, 4096, 4096);
    b.collective(Kind::MPI_Barrier, 0);
    close_file(b, f, 3);
    ranks.push_back(b.finish());
  }
  Planned p = plan_of(ranks);
  REQUIRE(p.plan.streams.size() == 1);
  const trace::Stream& s = p.plan.streams[0];
  REQUIRE(s.rank_list() == iota(0, 8));
  REQUIRE(s.view(s.ranks).size() == 2);  // one strided run
  REQUIRE(s.ranked.empty());
  REQUIRE(ranked_params(s) == 0);
  REQUIRE(s.nodes.size() == ranks[0].streams[0].nodes.size());
  // One distribution over all ranks' occurrences.
  REQUIRE(leaf_of(s, Kind::pread).dur.count() == 8 * 10);
}

TEST_CASE("N-to-N files at rank*size offsets merge with one affine variant", "[postproc][merge]") {
  constexpr int32_t kRanks = 8;
  constexpr int64_t kBlock = 4096;
  auto ranks = spmd(kRanks, 10, kBlock);
  Planned p = plan_of(ranks);
  REQUIRE(p.plan.streams.size() == 1);
  const trace::Stream& s = p.plan.streams[0];
  REQUIRE(s.rank_list() == iota(0, kRanks));
  REQUIRE(ranked_params(s) == 1);  // the offset, and nothing else
  const trace::Leaf& w = leaf_of(s, Kind::pwrite);
  REQUIRE(io_args(w).file().ranked < 0);  // file_<rank> is local id 3 on every rank
  const auto& v = variants(s, io_args(w).offset());
  REQUIRE(v.size() == 1);
  REQUIRE(v[0].scale == kBlock);
  REQUIRE(trace::seq_expand(s.view(v[0].ranks)) == iota(0, kRanks));
  REQUIRE(trace::seq_expand(s.view(v[0].seq)) == iota(0, 10 * kRanks * kBlock, kRanks * kBlock));
  // Statistics of all ranks: durations 1000 .. 1007.
  REQUIRE(w.dur.count() == kRanks * 10);
  REQUIRE(w.dur.min() == 1000);
  REQUIRE(w.dur.max() == 1000 + kRanks - 1);
  REQUIRE_THAT(text_of(s), Contains("ranks 0+1*i (x8)") && Contains("*rank"));
  // Each rank's file maps to its own global file.
  REQUIRE(p.plan.files[size_t(p.plan.ranks[5].files[3])].path == "/out/file_5");
}

TEST_CASE("rank 0 doing extra I/O gets a stream of its own", "[postproc][merge]") {
  std::vector<trace::RankTrace> ranks;
  for (int32_t r = 0; r < 6; ++r) {
    RankBuilder b(r, 6);
    int32_t f = b.file("/out/file_" + std::to_string(r));
    b.open(f, 3, O_CREAT | O_WRONLY, 3);
    for (int i = 0; i < 5; ++i) b.pwrite(f, 3, i * 100, 100, 100);
    if (r == 0) {
      int32_t log = b.file("/out/log");
      b.open(log, 4, O_CREAT | O_WRONLY, 4);
      b.pwrite(log, 4, 0, 10, 10);
    }
    b.collective(Kind::MPI_Barrier, 0);
    ranks.push_back(b.finish());
  }
  Planned p = plan_of(ranks);
  REQUIRE(p.plan.streams.size() == 2);
  REQUIRE(p.plan.streams[0].rank_list() == std::vector<int64_t>{0});
  REQUIRE(p.plan.streams[0] == ranks[0].streams[0]);  // left as it was
  REQUIRE(p.plan.streams[1].rank_list() == iota(1, 6));
  REQUIRE(ranked_params(p.plan.streams[1]) == 0);
}

TEST_CASE("rank-dependent trip counts become iteration-count variants", "[postproc][merge]") {
  auto program = [](int32_t size, auto trips) {
    std::vector<trace::RankTrace> ranks;
    for (int32_t r = 0; r < size; ++r) {
      RankBuilder b(r, size);
      int32_t f = b.file("/out/data");
      b.open(f, 3, O_CREAT | O_WRONLY, 3);
      for (int64_t i = 0; i < trips(r); ++i) {
        b.pwrite(f, 3, 64 * i, 64, 64);
        b.collective(Kind::MPI_Allreduce, 1);  // on MPI_COMM_SELF: counts differ by rank
      }
      close_file(b, f, 3);
      ranks.push_back(b.finish());
    }
    return ranks;
  };
  SECTION("trips = rank + 3: one affine variant") {
    Planned p = plan_of(program(8, [](int32_t r) { return r + 3; }));
    REQUIRE(p.plan.streams.size() == 1);
    const trace::Stream& s = p.plan.streams[0];
    const auto& iters = variants(s, first_loop(s).iters);
    REQUIRE(iters.size() == 1);
    REQUIRE(iters[0].scale == 1);
    REQUIRE(trace::seq_expand(s.view(iters[0].seq)) == std::vector<int64_t>{3});
    // Offsets differ only in how far they run: every rank reads a prefix of
    // the longest, so they share one variant too.
    const auto& offsets = variants(s, io_args(leaf_of(s, Kind::pwrite)).offset());
    REQUIRE(offsets.size() == 1);
    REQUIRE(trace::seq_expand(s.view(offsets[0].seq)) == iota(0, 64 * 10, 64));
  }
  SECTION("trips alternating 4 and 6: two variants on strided rank lists") {
    Planned p = plan_of(program(8, [](int32_t r) { return r % 2 ? 6 : 4; }));
    REQUIRE(p.plan.streams.size() == 1);
    const trace::Stream& s = p.plan.streams[0];
    const auto& iters = variants(s, first_loop(s).iters);
    REQUIRE(iters.size() == 2);
    REQUIRE(trace::seq_expand(s.view(iters[0].ranks)) == iota(0, 8, 2));
    REQUIRE(trace::seq_expand(s.view(iters[1].ranks)) == iota(1, 8, 2));
    REQUIRE(s.view(iters[0].ranks).size() == 2);
    REQUIRE(iters[0].scale == 0);
    REQUIRE(trace::seq_expand(s.view(iters[1].seq)) == std::vector<int64_t>{6});
  }
}

TEST_CASE("ranks calling from different call sites do not merge", "[postproc][merge]") {
  std::vector<trace::RankTrace> ranks;
  for (int32_t r = 0; r < 4; ++r) {
    RankBuilder b(r, 4);
    b.site(r < 2 ? 0x1000 : 0x2000);
    b.collective(Kind::MPI_Barrier, 0);
    ranks.push_back(b.finish());
  }
  Planned p = plan_of(ranks);
  REQUIRE(p.plan.streams.size() == 2);
  REQUIRE(p.plan.streams[0].rank_list() == std::vector<int64_t>{0, 1});
  REQUIRE(p.plan.streams[1].rank_list() == std::vector<int64_t>{2, 3});
  REQUIRE(p.plan.streams[1].leaves[0].callsite == 0x2000);
  REQUIRE_FALSE(merge::same_structure(ranks[0].streams[0], ranks[2].streams[0]));
}

TEST_CASE("stencil peers are affine on the world, exact on a sub-communicator", "[postproc][merge]") {
  constexpr int32_t kRanks = 8;
  std::vector<trace::RankTrace> ranks;
  for (int32_t r = 0; r < kRanks; ++r) {
    RankBuilder b(r, kRanks);
    // Ring on the world: send right, receive from the left.
    int32_t right = (r + 1) % kRanks, left = (r + kRanks - 1) % kRanks;
    if (r % 2 == 0) {
      b.send(0, right, 7);
      b.recv(0, left, 7, left, 7);
    } else {
      b.recv(0, left, 7, left, 7);
      b.send(0, right, 7);
    }
    // Even and odd ranks split; peer = comm rank + 1 within each half.
    std::vector<int32_t> half;
    for (int32_t m = r % 2; m < kRanks; m += 2) half.push_back(m);
    int32_t sub = b.comm(trace::CommOrigin::split, 0, 0, half);
    b.create(Kind::MPI_Comm_split, 0, sub);
    int32_t me = r / 2, n = kRanks / 2;
    b.send(sub, (me + 1) % n, 9);
    b.recv(sub, (me + n - 1) % n, 9, (me + n - 1) % n, 9);
    ranks.push_back(b.finish());
  }
  Planned p = plan_of(ranks);
  REQUIRE(p.plan.streams.size() == 2);  // even ranks send first, odd ranks receive first
  const trace::Stream& even = p.plan.streams[0];
  REQUIRE(even.rank_list() == iota(0, kRanks, 2));
  const trace::Leaf& world_send = even.leaves[0];
  REQUIRE(world_send.kind == Kind::MPI_Send);
  const auto& dest = variants(even, mpi_args(world_send).peer());
  REQUIRE(dest.size() == 1);  // dest = rank + 1 for ranks 0, 2, 4, 6
  REQUIRE(dest[0].scale == 1);
  const trace::Leaf& sub_send = even.leaves[3];
  REQUIRE(sub_send.kind == Kind::MPI_Send);
  REQUIRE(mpi_args(sub_send).comm().ranked < 0);  // the split comm is local id 2 everywhere
  // Comm ranks 1, 2, 3, 0 for world ranks 0, 2, 4, 6: no integer scale over the
  // world rank fits, so the search finds what it can and check_plan (in plan_of)
  // proves every rank still reads its own peers.
  REQUIRE(variants(even, mpi_args(sub_send).peer()).size() >= 2);
}

TEST_CASE("lossless streams merge with exact per-rank times", "[postproc][merge]") {
  std::vector<trace::RankTrace> ranks;
  for (int32_t r = 0; r < 4; ++r) {
    RankBuilder b(r, 4, trace::BuilderOptions{.lossless = true});
    int32_t f = b.file("/out/file_" + std::to_string(r));
    for (int i = 0; i < 6; ++i) b.call(Kind::pwrite, {{arg::handle, 3}, {arg::file, f}, {arg::offset, i}}, 1, 100 * r);
    ranks.push_back(b.finish());
  }
  Planned p = plan_of(ranks);  // check_plan compares gap, duration, start and end too
  REQUIRE(p.plan.streams.size() == 1);
  const trace::Stream& s = p.plan.streams[0];
  REQUIRE(s.lossless);
  const auto& dur = variants(s, s.leaves[0].exact_dur);
  REQUIRE(dur.size() == 1);  // 100 * rank
  REQUIRE(dur[0].scale == 100);
}

TEST_CASE("check_plan finds a plan that does not read back a rank's events", "[postproc][merge]") {
  auto ranks = spmd(4, 5, 512);
  postproc::TraceSet set = make_set(ranks);
  postproc::Analysis a = postproc::analyze(set);
  trace::Plan plan = postproc::build_plan(set, a);
  REQUIRE(plan.streams.size() == 1);
  SECTION("a variant's scale off by one") {
    for (auto& vs : plan.streams[0].ranked)
      for (auto& v : vs) v.scale += 1;
    REQUIRE_THROWS_WITH(postproc::check_plan(set, plan, "P"),
                        Contains("P: stream 0 read for rank 1 thread 0 differs from <memory rank 1>") &&
                            Contains("(pwrite): off is 513, want 512"));
  }
  SECTION("a rank missing from the rank list") {
    plan.streams[0].ranks = merge::add_rank_list(plan.streams[0].values, std::vector<int32_t>{0, 1, 3});
    REQUIRE_THROWS_WITH(postproc::check_plan(set, plan, "P"), Contains("no stream for rank 2 thread 0"));
  }
  SECTION("a rank twice") {
    plan.streams.push_back(ranks[2].streams[0]);
    REQUIRE_THROWS_WITH(postproc::check_plan(set, plan, "P"), Contains("both stand for rank 2 thread 0"));
  }
}

TEST_CASE("post_process with verify checks the plan before writing it", "[postproc][merge]") {
  TempDir tmp;
  auto ranks = spmd(4, 3, 100);
  write_trace_dir(tmp / "t", complete_job(4), ranks);
  std::ostringstream log, warn;
  postproc::post_process(tmp / "t", tmp / "p", log, warn, {.verify = true});
  REQUIRE_THAT(log.str(), Contains("verified " + (tmp / "p/plan.mpior") +
                                   ": its 1 streams give back the 32 events of 4 ranks exactly"));
  // A plan that does not read back is named, with the rank's trace.
  postproc::TraceSet set = postproc::read_trace_dir(tmp / "t");
  trace::Plan plan = trace::read_plan(tmp / "p/plan.mpior");
  REQUIRE(postproc::check_encoded_plan(set, plan, "P") == 32);
  plan.streams[0].ranked[0][0].scale = 0;
  REQUIRE_THROWS_WITH(postproc::check_encoded_plan(set, plan, "P"),
                      Contains("P: stream 0 read for rank 1 thread 0 differs from " + (tmp / "t/rank-000001.mpior")) &&
                          Contains("(pwrite): off is 0, want 100"));
}
