#include "postproc/aggregators.hpp"

#include <fcntl.h>

#include <catch2/catch.hpp>
#include <map>
#include <tuple>
#include <vector>

#include "postproc/analyze.hpp"
#include "postproc/plan.hpp"
#include "test/postproc/fixture.hpp"
#include "trace/arg_views.hpp"
#include "trace/cursor.hpp"
#include "trace/tool_error.hpp"

using namespace mpior;
using namespace mpior::test;
using trace::Kind;
namespace arg = trace::arg;
namespace fio = trace::fio;

namespace {

// Four ranks open one file collectively (ROMIO's nested open on each, fd
// 10 + rank) and make two collective writes of 16 KiB in all; as with one
// aggregator, rank 0 alone wrote each call's data, in two 8 KiB pwrites.
trace::Plan one_aggregator() {
  std::vector<trace::RankTrace> ranks;
  for (int32_t r = 0; r < 4; ++r) {
    RankBuilder b(r, 4);
    int32_t f = b.file("/out/shared", O_CREAT | O_WRONLY);
    b.call(Kind::MPI_File_open, {{arg::handle, 1}, {arg::file, f}, {arg::flags, fio::kColl}, {arg::fcomm, 0}});
    b.call(Kind::open, {{arg::handle, 10 + r}, {arg::file, f}, {arg::flags, O_CREAT | O_WRONLY}}, 10 + r, 1000, 1);
    for (int64_t step = 0; step < 2; ++step) {
      b.call(Kind::MPI_File_write_at_all,
             {{arg::handle, 1},
              {arg::file, f},
              {arg::offset, 16384 * step + 4096 * r},
              {arg::count, 4096},
              {arg::flags, fio::kColl | fio::kAt},
              {arg::fcomm, 0}},
             0, 100000);
      if (r == 0)
        for (int64_t half = 0; half < 2; ++half)
          b.call(Kind::pwrite64,
                 {{arg::handle, 10}, {arg::file, f}, {arg::offset, 16384 * step + 8192 * half}, {arg::count, 8192}},
                 8192, 2000, 1);
    }
    b.call(Kind::MPI_File_close, {{arg::handle, 1}, {arg::file, f}, {arg::flags, fio::kColl}, {arg::fcomm, 0}});
    ranks.push_back(b.finish());
  }
  postproc::TraceSet set = make_set(std::move(ranks));
  return postproc::build_plan(set, postproc::analyze(set));
}

// Per rank: the (fd, offset, bytes) of its nested POSIX writes.
using Writes = std::map<int32_t, std::vector<std::tuple<int64_t, int64_t, int64_t>>>;
Writes writes_of(const trace::Plan& plan) {
  Writes out;
  for (const trace::Stream& s : plan.streams)
    for (int64_t r : s.rank_list()) {
      trace::EventCursor c(s, int32_t(r));
      trace::Event ev;
      while (c.next(ev))
        if (ev.depth == 1 && ev.op() == trace::OpClass::write) {
          auto a = io_args(ev);
          out[int32_t(r)].emplace_back(a.handle(), a.offset(), a.count());
        }
    }
  return out;
}

}  // namespace

TEST_CASE("cb_nodes: each collective write's domain split among the lowest ranks, in buffer-sized pieces",
          "[postproc][aggregators]") {
  trace::Plan plan = one_aggregator();
  REQUIRE(writes_of(plan).size() == 1);  // as traced: rank 0 alone
  postproc::Redealt d = postproc::redeal_collective_writes(plan, 2, 4096);
  CHECK(d.calls == 2);
  CHECK(d.writers == 2);
  CHECK(d.writes == 8);
  using W = std::vector<std::tuple<int64_t, int64_t, int64_t>>;
  Writes got = writes_of(plan);
  REQUIRE(got.size() == 2);
  // Rank 0 writes the first half of each call's 16 KiB, rank 1 (its own fd) the second.
  CHECK(got[0] == W{{10, 0, 4096}, {10, 4096, 4096}, {10, 16384, 4096}, {10, 20480, 4096}});
  CHECK(got[1] == W{{11, 8192, 4096}, {11, 12288, 4096}, {11, 24576, 4096}, {11, 28672, 4096}});
  CHECK(plan.extrap.notes.back().name == "cb_nodes");
}

TEST_CASE("cb_nodes above the ranks of a call: every rank writes its share once", "[postproc][aggregators]") {
  trace::Plan plan = one_aggregator();
  postproc::Redealt d = postproc::redeal_collective_writes(plan, 8, 1 << 20);
  CHECK(d.writers == 4);
  Writes got = writes_of(plan);
  REQUIRE(got.size() == 4);
  for (int32_t r = 0; r < 4; ++r) {
    CAPTURE(r);
    CHECK(got[r] == std::vector<std::tuple<int64_t, int64_t, int64_t>>{{10 + r, 4096 * r, 4096},
                                                                       {10 + r, 16384 + 4096 * r, 4096}});
  }
  CHECK_THROWS_AS(postproc::redeal_collective_writes(plan, 0, 4096), mpior::ToolError);
}
