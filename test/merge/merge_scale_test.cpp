// The merge at scale (1,024 SPMD ranks: the plan stays the size of one rank's
// trace) and on random loop programs (every rank reads back its own events).
#include <fcntl.h>

#include <catch2/catch.hpp>

#include "merge/merge.hpp"
#include "postproc/analyze.hpp"
#include "postproc/merge_check.hpp"
#include "postproc/plan.hpp"
#include "test/postproc/fixture.hpp"
#include "test/trace/loop_programs.hpp"
#include "trace/format.hpp"

using namespace mpior;
using namespace mpior::test;
using trace::Kind;
namespace arg = trace::arg;

namespace {

constexpr int64_t kBlock = 1 << 20;

// Rank r of an SPMD loop program: open file_<rank>, 100 iterations of pwrite
// at rank*S + i*N*S and a barrier, close.
trace::RankTrace spmd_rank(int32_t r, int32_t size) {
  RankBuilder b(r, size);
  int32_t f = b.file("/scratch/out/file_" + std::to_string(r));
  b.open(f, 3, O_CREAT | O_WRONLY, 3);
  for (int64_t i = 0; i < 100; ++i) {
    b.pwrite(f, 3, r * kBlock + i * size * kBlock, kBlock, kBlock);
    b.collective(Kind::MPI_Barrier, 0);
  }
  b.call(Kind::close, {{arg::handle, 3}, {arg::file, f}});
  return b.finish();
}

template <typename Doc>
size_t stream_bytes(Doc doc) {
  size_t with = trace::encode(doc).size();
  doc.streams.clear();
  return with - trace::encode(doc).size();
}

}  // namespace

TEST_CASE("1,024 SPMD ranks make a plan the size of one rank's trace", "[postproc][merge][scale]") {
  constexpr int32_t kRanks = 1024;
  std::vector<trace::RankTrace> ranks;
  for (int32_t r = 0; r < kRanks; ++r) ranks.push_back(spmd_rank(r, kRanks));
  postproc::TraceSet set = make_set(std::move(ranks));
  postproc::Analysis a = postproc::analyze(set);
  trace::Plan plan = trace::decode_plan(trace::encode(postproc::build_plan(set, a)), "plan");

  REQUIRE(plan.streams.size() == 1);
  const trace::Stream& s = plan.streams[0];
  REQUIRE(s.view(s.ranks).size() == 2);
  REQUIRE(s.ranked.size() == 1);  // the offsets: one affine variant
  REQUIRE(s.ranked[0].size() == 1);
  REQUIRE(s.ranked[0][0].scale == kBlock);
  // The streams part of the plan file against the same part of one rank's file.
  size_t rank_trace = trace::encode(set.ranks[0]).size(), rank_streams = stream_bytes(set.ranks[0]);
  size_t plan_file = trace::encode(plan).size(), plan_streams = stream_bytes(plan);
  INFO("rank trace " << rank_trace << " B (streams " << rank_streams << " B), plan " << plan_file << " B (streams "
                     << plan_streams << " B)");
  REQUIRE(plan_streams < 2 * rank_streams);
  // What grows with the ranks is only the per-rank tables (PlanRank, file table).
  trace::Plan tables = plan;
  tables.streams.clear();
  REQUIRE(plan_file < trace::encode(tables).size() + 2 * rank_trace);
  REQUIRE(postproc::check_plan(set, plan, "plan") == uint64_t(kRanks) * 202);
}

TEST_CASE("random loop programs merge and every rank reads back its events", "[postproc][merge]") {
  constexpr int32_t kRanks = 6;
  size_t streams_in = 0, streams_out = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    ProgShape shape;
    shape.max_events = 3000;
    ProgramRunner runner(seed, shape);
    auto program = runner.make_program();
    trace::BuilderOptions opt;
    opt.lossless = seed % 4 == 0;
    std::vector<trace::Stream> own;
    for (int32_t r = 0; r < kRanks; ++r) {
      // Each run goes on from the last: strided values continue, random trip
      // counts and values change, so ranks differ the way SPMD ranks do.
      trace::StreamBuilder b(opt);
      for (const trace::RawEvent& ev : runner.run(program)) b.append(ev);
      own.push_back(b.snapshot(r, 0));
    }
    std::vector<trace::Stream> merged = merge::merge_streams(own);
    streams_in += own.size();
    streams_out += merged.size();
    for (int32_t r = 0; r < kRanks; ++r) {
      INFO("seed " << seed << " rank " << r);
      const trace::Stream* mine = nullptr;
      for (const trace::Stream& m : merged)
        if (trace::seq_contains(m.view(m.ranks), r)) {
          REQUIRE(mine == nullptr);
          mine = &m;
        }
      REQUIRE(mine != nullptr);
      REQUIRE(postproc::first_difference(own[size_t(r)], *mine, r).empty());
    }
  }
  // Most programs fold the same way on every rank.
  INFO(streams_in << " streams merged into " << streams_out);
  REQUIRE(streams_out * 2 < streams_in);
}
