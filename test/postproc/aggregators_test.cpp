#include "postproc/aggregators.hpp"

#include <fcntl.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "postproc/analyze.hpp"
#include "postproc/plan.hpp"
#include "postproc/romio_layout.hpp"
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
// 10 + rank) and make two collective writes (or reads) of 16 KiB in all; as
// with one aggregator, rank 0 alone moved each call's data, in two 8 KiB
// pwrites (preads). Rank r runs on hosts[r].
trace::Plan one_aggregator(bool read = false, std::vector<std::string> hosts = {"n0", "n0", "n0", "n0"},
                           int64_t stride = 4096) {
  std::vector<trace::RankTrace> ranks;
  for (int32_t r = 0; r < 4; ++r) {
    RankBuilder b(r, 4);
    b.trace().process.host = hosts[size_t(r)];
    int64_t mode = read ? O_RDONLY : O_CREAT | O_WRONLY;
    int32_t f = b.file("/out/shared", mode);
    b.call(Kind::MPI_File_open, {{arg::handle, 1}, {arg::file, f}, {arg::flags, fio::kColl}, {arg::fcomm, 0}});
    b.call(Kind::open, {{arg::handle, 10 + r}, {arg::file, f}, {arg::flags, mode}}, 10 + r, 1000, 1);
    for (int64_t step = 0; step < 2; ++step) {
      b.call(read ? Kind::MPI_File_read_at_all : Kind::MPI_File_write_at_all,
             {{arg::handle, 1},
              {arg::file, f},
              {arg::offset, 16384 * step + stride * r},
              {arg::count, 4096},
              {arg::flags, fio::kColl | fio::kAt},
              {arg::fcomm, 0}},
             0, 100000);
      if (r == 0)
        for (int64_t half = 0; half < 2; ++half)
          b.call(read ? Kind::pread64 : Kind::pwrite64,
                 {{arg::handle, 10}, {arg::file, f}, {arg::offset, 16384 * step + 8192 * half}, {arg::count, 8192}},
                 8192, 2000, 1);
    }
    b.call(Kind::MPI_File_close, {{arg::handle, 1}, {arg::file, f}, {arg::flags, fio::kColl}, {arg::fcomm, 0}});
    ranks.push_back(b.finish());
  }
  postproc::TraceSet set = make_set(std::move(ranks));
  return postproc::build_plan(set, postproc::analyze(set));
}

// Per rank: the (fd, offset, bytes) of its nested POSIX transfers of one
// direction.
using Moved = std::vector<std::tuple<int64_t, int64_t, int64_t>>;
std::map<int32_t, Moved> moved_by(const trace::Plan& plan, trace::OpClass op = trace::OpClass::write) {
  std::map<int32_t, Moved> out;
  for (const trace::Stream& s : plan.streams)
    for (int64_t r : s.rank_list()) {
      trace::EventCursor c(s, int32_t(r));
      trace::Event ev;
      while (c.next(ev))
        if (ev.depth == 1 && ev.op() == op) {
          auto a = io_args(ev);
          out[int32_t(r)].emplace_back(a.handle(), a.offset(), a.count());
        }
    }
  return out;
}

// The (offset, count, bytes read) of the plan's preads, streams in order.
Moved preads(const trace::Plan& plan) {
  Moved out;
  for (const trace::Stream& s : plan.streams)
    for (int64_t r : s.rank_list()) {
      trace::EventCursor c(s, int32_t(r));
      trace::Event ev;
      while (c.next(ev))
        if (ev.kind == Kind::pread) out.emplace_back(io_args(ev).offset(), io_args(ev).count(), ev.ret);
    }
  return out;
}

// romio_cb_read/write enable: the fixture's ranks ask for 4 KiB each, one
// after the other, which ROMIO's automatic would move independently.
postproc::CollectiveHints hints(int nodes, int64_t cb, std::string list = "*:*", int64_t stripe = 0,
                                postproc::CbMode mode = postproc::CbMode::enable) {
  return {nodes, cb, std::move(list), stripe, 0, mode, mode};
}

}  // namespace

TEST_CASE("cb_nodes: each collective write's domain split among the first ranks, in buffer-sized pieces",
          "[postproc][aggregators]") {
  trace::Plan plan = one_aggregator();
  REQUIRE(moved_by(plan).size() == 1);  // as traced: rank 0 alone
  postproc::Redealt d = postproc::redeal_collective_io(plan, hints(2, 4096));
  CHECK(d.calls == 2);
  CHECK(d.aggregators == 2);
  CHECK(d.transfers == 8);
  auto got = moved_by(plan);
  REQUIRE(got.size() == 2);
  // Rank 0 writes the first half of each call's 16 KiB, rank 1 (its own fd) the second.
  CHECK(got[0] == Moved{{10, 0, 4096}, {10, 4096, 4096}, {10, 16384, 4096}, {10, 20480, 4096}});
  CHECK(got[1] == Moved{{11, 8192, 4096}, {11, 12288, 4096}, {11, 24576, 4096}, {11, 28672, 4096}});
  CHECK(plan.extrap.notes.back().name == "cb_nodes");
  // Ranks 2 and 3 keep their stream: its rank variants name only them, and
  // each rank still reads back its own MPI-level offsets.
  std::map<int32_t, std::vector<int64_t>> offsets;
  for (const trace::Stream& s : plan.streams) {
    std::vector<int64_t> ranks = s.rank_list();
    for (const auto& variants : s.ranked)
      for (const trace::RankVariant& v : variants)
        for (int64_t r : trace::seq_expand(s.view(v.ranks))) CHECK(std::count(ranks.begin(), ranks.end(), r) == 1);
    for (int64_t r : ranks) {
      trace::EventCursor c(s, int32_t(r));
      trace::Event ev;
      while (c.next(ev))
        if (ev.kind == Kind::MPI_File_write_at_all) offsets[int32_t(r)].push_back(mpiio_args(ev).offset());
    }
  }
  for (int32_t r = 0; r < 4; ++r) CHECK(offsets[r] == std::vector<int64_t>{4096 * r, 16384 + 4096 * r});
}

TEST_CASE("cb_nodes above the ranks of a call: every rank writes its share once", "[postproc][aggregators]") {
  trace::Plan plan = one_aggregator();
  postproc::Redealt d = postproc::redeal_collective_io(plan, hints(8, 1 << 20));
  CHECK(d.aggregators == 4);
  auto got = moved_by(plan);
  REQUIRE(got.size() == 4);
  for (int32_t r = 0; r < 4; ++r) {
    CAPTURE(r);
    CHECK(got[r] == Moved{{10 + r, 4096 * r, 4096}, {10 + r, 16384 + 4096 * r, 4096}});
  }
  CHECK_THROWS_AS(postproc::redeal_collective_io(plan, hints(0, 4096)), mpior::ToolError);
}

TEST_CASE("cb_nodes: collective reads become the aggregators' preads", "[postproc][aggregators]") {
  trace::Plan plan = one_aggregator(true);
  REQUIRE(moved_by(plan, trace::OpClass::read).size() == 1);
  postproc::Redealt d = postproc::redeal_collective_io(plan, hints(2, 4096));
  CHECK(d.calls == 2);
  CHECK(d.transfers == 8);
  CHECK(moved_by(plan, trace::OpClass::write).empty());
  auto got = moved_by(plan, trace::OpClass::read);
  REQUIRE(got.size() == 2);
  CHECK(got[0] == Moved{{10, 0, 4096}, {10, 4096, 4096}, {10, 16384, 4096}, {10, 20480, 4096}});
  CHECK(got[1] == Moved{{11, 8192, 4096}, {11, 12288, 4096}, {11, 24576, 4096}, {11, 28672, 4096}});
  for (const trace::Stream& s : plan.streams) {
    trace::EventCursor c(s, int32_t(s.rank_list().front()));
    trace::Event ev;
    while (c.next(ev))
      if (ev.depth == 1 && ev.op() == trace::OpClass::read) CHECK(ev.kind == Kind::pread);
  }
}

TEST_CASE("cb_config_list *:1: one aggregator a node, the lowest rank of each", "[postproc][aggregators]") {
  // Block placement: ranks 0 and 1 on n0, 2 and 3 on n1; cb_nodes=4 gives two.
  trace::Plan plan = one_aggregator(false, {"n0", "n0", "n1", "n1"});
  postproc::Redealt d = postproc::redeal_collective_io(plan, hints(4, 1 << 20, "*:1"));
  CHECK(d.aggregators == 2);
  auto got = moved_by(plan);
  REQUIRE(got.size() == 2);
  CHECK(got[0] == Moved{{10, 0, 8192}, {10, 16384, 8192}});
  CHECK(got[2] == Moved{{12, 8192, 8192}, {12, 24576, 8192}});
}

TEST_CASE("striping_unit: file domains end on the nearest stripe boundary", "[postproc][aggregators]") {
  trace::Plan plan = one_aggregator();
  // 16 KiB in 3 domains of 5462 bytes; boundaries 5462 and 10924 move to 4096 and 12288.
  postproc::redeal_collective_io(plan, hints(3, 1 << 20, "*:*", 4096));
  auto got = moved_by(plan);
  REQUIRE(got.size() == 3);
  CHECK(got[0] == Moved{{10, 0, 4096}, {10, 16384, 4096}});
  CHECK(got[1] == Moved{{11, 4096, 8192}, {11, 20480, 8192}});
  CHECK(got[2] == Moved{{12, 12288, 4096}, {12, 28672, 4096}});
}

TEST_CASE("ROMIO's aggregator list from cb_config_list and the ranks' nodes", "[postproc][aggregators]") {
  using V = std::vector<int32_t>;
  V ranks{0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<std::string> cyclic{"a", "b", "a", "b", "a", "b", "a", "b"};
  std::vector<std::string> block{"a", "a", "a", "a", "b", "b", "b", "b"};
  CHECK(postproc::aggregator_ranks(ranks, cyclic, hints(8, 1, "*:1")) == V{0, 1});
  CHECK(postproc::aggregator_ranks(ranks, block, hints(8, 1, "*:1")) == V{0, 4});
  CHECK(postproc::aggregator_ranks(ranks, block, hints(1, 1, "*:1")) == V{0});
  CHECK(postproc::aggregator_ranks(ranks, block, hints(8, 1, "*")) == V{0, 4});
  // Per node in the order nodes are met: not ascending ranks.
  CHECK(postproc::aggregator_ranks(ranks, cyclic, hints(3, 1, "*:2")) == V{0, 2, 1});
  CHECK(postproc::aggregator_ranks(ranks, cyclic, hints(8, 1, "*:3")) == V{0, 2, 4, 1, 3, 5});
  // *:* takes the first ranks whatever their node, at most all of them.
  CHECK(postproc::aggregator_ranks(ranks, cyclic, hints(3, 1, "*:*")) == V{0, 1, 2});
  CHECK(postproc::aggregator_ranks(ranks, cyclic, hints(20, 1, "*:*")) == ranks);
  // Named hosts: their first N ranks, then a wildcard over the hosts left.
  CHECK(postproc::aggregator_ranks(ranks, block, hints(8, 1, "b:2,a:1")) == V{4, 5, 0});
  CHECK(postproc::aggregator_ranks(ranks, block, hints(8, 1, "b,*:2")) == V{4, 0, 1});
  CHECK(postproc::aggregator_ranks(ranks, block, hints(8, 1, "b:*")) == V{4, 5, 6, 7});
  CHECK(postproc::aggregator_ranks(ranks, cyclic, hints(3, 1, "a:8")) == V{0, 2, 4});
  // A host met twice gives nothing the second time; an unknown host nothing.
  CHECK(postproc::aggregator_ranks(ranks, block, hints(8, 1, "a:1,a:2,zz:3,b:1")) == V{0, 4});
  CHECK_THROWS_AS(postproc::aggregator_ranks(ranks, block, hints(8, 1, "zz:2")), mpior::ToolError);
  CHECK_THROWS_AS(postproc::aggregator_ranks(ranks, block, hints(8, 1, "*:0")), mpior::ToolError);
  for (const char* bad : {"*:x", "**:1", "a:1:2", "a,,b", ""}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(postproc::check_hints(hints(2, 1, bad)), mpior::ToolError);
  }
  CHECK_NOTHROW(postproc::check_hints(hints(2, 1, "n0:2,*:1")));
}

TEST_CASE("cb_nodes: a window with a hole is read, then written whole", "[postproc][aggregators]") {
  // Rank r writes 4 KiB at 16 KiB x step + 8 KiB x r: every other 4 KiB is a hole.
  trace::Plan plan = one_aggregator(false, {"n0", "n0", "n0", "n0"}, 8192);
  postproc::redeal_collective_io(plan, hints(2, 1 << 20));
  // (rank, pread or pwrite, offset, count, ret) in stream order.
  std::vector<std::tuple<int64_t, bool, int64_t, int64_t, int64_t>> got;
  for (const trace::Stream& s : plan.streams)
    for (int64_t r : s.rank_list()) {
      trace::EventCursor c(s, int32_t(r));
      trace::Event ev;
      while (c.next(ev))
        if (ev.kind == Kind::pread || ev.kind == Kind::pwrite) {
          auto a = io_args(ev);
          got.emplace_back(r, ev.kind == Kind::pread, a.offset(), a.count(), ev.ret);
        }
    }
  using T = decltype(got)::value_type;
  // Step 0 on a new file: its reads find nothing. Step 1: rank 0's window
  // lies below what step 0 wrote, rank 1's above it.
  CHECK(got == std::vector<T>{{0, true, 0, 12288, 0},
                              {0, false, 0, 12288, 12288},
                              {0, true, 16384, 12288, 12288},
                              {0, false, 16384, 12288, 12288},
                              {1, true, 16384, 12288, 0},
                              {1, false, 16384, 12288, 12288},
                              {1, true, 32768, 12288, 0},
                              {1, false, 32768, 12288, 12288}});
}

TEST_CASE("romio_cb_write automatic: requests that do not interleave move on their own ranks",
          "[postproc][aggregators]") {
  trace::Plan plan = one_aggregator();
  postproc::Redealt d = postproc::redeal_collective_io(plan, hints(2, 4096, "*:*", 0, postproc::CbMode::automatic));
  CHECK(d.calls == 2);
  CHECK(d.independent == 2);
  auto got = moved_by(plan);
  REQUIRE(got.size() == 4);
  for (int32_t r = 0; r < 4; ++r) CHECK(got[r] == Moved{{10 + r, 4096 * r, 4096}, {10 + r, 16384 + 4096 * r, 4096}});
  // ROMIO's check: a rank's first byte before the previous rank's last.
  using R = std::vector<postproc::Request>;
  CHECK_FALSE(postproc::interleaved(R{{0, 99}, {100, 199}}));
  CHECK(postproc::interleaved(R{{0, 99}, {50, 149}}));
  CHECK_FALSE(postproc::interleaved(R{{0, 99}, {99, 199}}));  // one byte shared is not enough
  CHECK_FALSE(postproc::interleaved(R{{0, 99}, {10, 9}}));    // an empty request never interleaves
}

// The fixture's ranks write 4 KiB each, one after the other: ROMIO's generic
// automatic moves them independently, its Lustre driver two-phase, stripe
// k by aggregator k mod 2 (4 aggregators given, factor 2).
TEST_CASE("striping_factor: collective writes dealt by stripe as ROMIO's Lustre driver does",
          "[postproc][aggregators][lustre]") {
  postproc::CollectiveHints lustre = hints(4, 1 << 20, "*:*", 4096, postproc::CbMode::automatic);
  lustre.striping_factor = 2;
  trace::Plan plan = one_aggregator();
  postproc::Redealt d = postproc::redeal_collective_io(plan, lustre);
  CHECK(d.independent == 0);
  CHECK(d.aggregators == 2);
  auto got = moved_by(plan);
  REQUIRE(got.size() == 2);
  CHECK(got[0] == Moved{{10, 0, 4096}, {10, 8192, 4096}, {10, 16384, 4096}, {10, 24576, 4096}});
  CHECK(got[1] == Moved{{11, 4096, 4096}, {11, 12288, 4096}, {11, 20480, 4096}, {11, 28672, 4096}});
  // Its collective reads are the generic ones: these move independently.
  trace::Plan reads = one_aggregator(true);
  CHECK(postproc::redeal_collective_io(reads, lustre).independent == 2);
}

// The fixture's ranks write 4 KiB each, one after the other, one piece a
// rank: ADIOI_LUSTRE_Docollect's average is 4096 bytes.
TEST_CASE("romio_lustre_coll_threshold: writes that do not interleave move alone above it",
          "[postproc][aggregators][lustre]") {
  postproc::CollectiveHints lustre = hints(2, 1 << 20, "*:*", 4096, postproc::CbMode::automatic);
  lustre.striping_factor = 2, lustre.lustre_coll_threshold = 4096;
  trace::Plan at = one_aggregator();
  CHECK(postproc::redeal_collective_io(at, lustre).independent == 0);
  lustre.lustre_coll_threshold = 4095;
  trace::Plan above = one_aggregator();
  CHECK(postproc::redeal_collective_io(above, lustre).independent == 2);
  auto got = moved_by(above);
  REQUIRE(got.size() == 4);
  CHECK(got[3] == Moved{{13, 12288, 4096}, {13, 28672, 4096}});
  // enable still makes them two-phase.
  lustre.cb_write = postproc::CbMode::enable;
  trace::Plan enabled = one_aggregator();
  CHECK(postproc::redeal_collective_io(enabled, lustre).independent == 0);
}

// co_ratio 2 over 2 targets with 4 cb_nodes: 4 aggregators, stripe k by
// the (k mod 4)-th; each rank writes its own stripe.
TEST_CASE("romio_lustre_co_ratio: more aggregators a target", "[postproc][aggregators][lustre]") {
  postproc::CollectiveHints lustre = hints(4, 1 << 20, "*:*", 4096, postproc::CbMode::automatic);
  lustre.striping_factor = 2, lustre.lustre_co_ratio = 2;
  trace::Plan plan = one_aggregator();
  postproc::Redealt d = postproc::redeal_collective_io(plan, lustre);
  CHECK(d.aggregators == 4);
  auto got = moved_by(plan);
  REQUIRE(got.size() == 4);
  CHECK(got[1] == Moved{{11, 4096, 4096}, {11, 20480, 4096}});
}

// Rank r writes 4 KiB at 8 KiB x r: one aggregator (one target), stripes of
// 8 KiB, each but the last with a hole after its 4 KiB.
TEST_CASE("romio_lustre_ds_in_coll: a stripe's hole read and written, or each run alone",
          "[postproc][aggregators][lustre]") {
  postproc::CollectiveHints lustre = hints(1, 1 << 20, "*:*", 8192, postproc::CbMode::automatic);
  lustre.striping_factor = 1;
  trace::Plan sieved = one_aggregator(false, {"n0", "n0", "n0", "n0"}, 8192);
  postproc::redeal_collective_io(sieved, lustre);
  Moved written = moved_by(sieved)[0];
  CHECK(written == Moved{{10, 0, 8192},
                         {10, 8192, 8192},
                         {10, 16384, 8192},
                         {10, 24576, 4096},
                         {10, 16384, 8192},
                         {10, 24576, 8192},
                         {10, 32768, 8192},
                         {10, 40960, 4096}});
  // The stripes with a hole read first (step 1's second one partly past
  // what step 0 wrote: the rest read again, finding nothing); none after.
  CHECK(preads(sieved) == Moved{{0, 8192, 0},
                                {8192, 8192, 0},
                                {16384, 8192, 0},
                                {16384, 8192, 8192},
                                {24576, 8192, 4096},
                                {28672, 4096, 0},
                                {32768, 8192, 0}});
  lustre.lustre_ds_in_coll = false;
  trace::Plan runs = one_aggregator(false, {"n0", "n0", "n0", "n0"}, 8192);
  postproc::redeal_collective_io(runs, lustre);
  Moved alone;  // the same starts, 4 KiB each
  for (auto [fd, at, bytes] : written) alone.emplace_back(fd, at, 4096);
  CHECK(moved_by(runs)[0] == alone);
  CHECK(preads(runs).empty());
}

TEST_CASE("an OMPIO component asked of a job not traced under OMPIO is refused", "[postproc][aggregators][ompio]") {
  trace::Plan plan = one_aggregator();
  postproc::MpiioHints h{hints(2, 1 << 20), std::nullopt, false, postproc::OmpioFcoll::dynamic_gen2, std::nullopt};
  CHECK_THROWS_WITH(postproc::redeal_mpiio(plan, h), Catch::Contains("not traced under Open MPI's OMPIO"));
  h.ompio_fcoll = postproc::OmpioFcoll::automatic;
  CHECK_NOTHROW(postproc::redeal_mpiio(plan, h));
}

// dynamic_gen2 on Lustre: as many aggregators as stripes (ranks 0 and 2
// of 4), stripe k written by the (k mod 2)-th, one pwrite a stripe; off
// Lustre, cb_nodes of them over 64 KiB stripes.
TEST_CASE("OMPIO dynamic_gen2: the striping hints give its stripes and aggregators", "[postproc][aggregators][ompio]") {
  postproc::CollectiveHints lustre = hints(1, 1 << 20, "*:*", 4096);
  lustre.striping_factor = 2;
  trace::Plan plan = one_aggregator();
  postproc::redeal_mpiio(plan, {lustre, std::nullopt, true, postproc::OmpioFcoll::dynamic_gen2, std::nullopt});
  auto got = moved_by(plan);
  REQUIRE(got.size() == 2);
  CHECK(got[0] == Moved{{10, 0, 4096}, {10, 8192, 4096}, {10, 16384, 4096}, {10, 24576, 4096}});
  CHECK(got[2] == Moved{{12, 4096, 4096}, {12, 12288, 4096}, {12, 20480, 4096}, {12, 28672, 4096}});
  trace::Plan local = one_aggregator();
  postproc::redeal_mpiio(local,
                         {hints(1, 1 << 20), std::nullopt, true, postproc::OmpioFcoll::dynamic_gen2, std::nullopt});
  CHECK(moved_by(local) == std::map<int32_t, Moved>{{0, {{10, 0, 16384}, {10, 16384, 16384}}}});
}

TEST_CASE("ROMIO's file domains, with and without stripe alignment", "[postproc][aggregators]") {
  using D = std::vector<postproc::ByteRange>;
  CHECK(postproc::file_domains(0, 10000, 3, 0) == D{{0, 3334}, {3334, 6668}, {6668, 10000}});
  CHECK(postproc::file_domains(0, 10000, 3, 4096) == D{{0, 4096}, {4096, 8192}, {8192, 10000}});
  // Boundaries at 1, 2, 3 round to 0, 4 (a tie goes up), 4: one domain holds it all.
  CHECK(postproc::file_domains(0, 4, 4, 4) == D{{0, 0}, {0, 4}, {4, 4}, {4, 4}});
  // More aggregators than bytes: the last ones get nothing.
  CHECK(postproc::file_domains(100, 102, 4, 0) == D{{100, 101}, {101, 102}, {102, 102}, {102, 102}});
  // romio_min_fdomain_size widens the domains; the last ones run empty.
  CHECK(postproc::file_domains(0, 10000, 3, 0, 6000) == D{{0, 6000}, {6000, 10000}, {10000, 10000}});
}

// Vulcan past two cycles (a 4 KiB buffer: 2 KiB a cycle, eight a call, one
// entry each): each cycle an aio_write, learned done (aio_error, its
// completion record, aio_return) before the next cycle's is submitted.
TEST_CASE("OMPIO vulcan's asynchronous writes are AIO requests in the plan", "[postproc][aggregators][ompio]") {
  trace::Plan plan = one_aggregator();
  postproc::redeal_mpiio(plan, {hints(1, 4096), std::nullopt, true, postproc::OmpioFcoll::vulcan, std::nullopt});
  CHECK(moved_by(plan).empty());  // no pwrite left
  std::vector<Kind> kinds;
  std::vector<int64_t> ids, offsets;
  for (const trace::Stream& s : plan.streams)
    for (int64_t r : s.rank_list()) {
      trace::EventCursor c(s, int32_t(r));
      trace::Event ev;
      while (c.next(ev)) {
        if (ev.depth == 0 || trace::info(ev.kind).family != trace::Family::aio) continue;
        CHECK(r == 0);
        kinds.push_back(ev.kind);
        if (ev.kind != Kind::mpior_aio_done) continue;
        auto a = aio_args(ev);
        CHECK((ev.depth == 2 && ev.ret == 2048 && a.submit_depth() == 1));
        CHECK((a.handle() == 10 && a.lio_op() == trace::kAioWrite && a.submit_kind() == int64_t(Kind::aio_write)));
        ids.push_back(a.aio_req());
        offsets.push_back(a.offset());
      }
    }
  REQUIRE(kinds.size() == 2 * 8 * 4);
  for (size_t i = 0; i < kinds.size(); i += 4)
    CHECK(std::vector<Kind>(kinds.begin() + long(i), kinds.begin() + long(i) + 4) ==
          std::vector<Kind>{Kind::aio_write, Kind::aio_error, Kind::mpior_aio_done, Kind::aio_return});
  std::vector<int64_t> want_offsets, want_ids;
  for (int64_t k = 0; k < 16; ++k) want_offsets.push_back(2048 * k), want_ids.push_back(1 + k);
  CHECK(offsets == want_offsets);
  CHECK(ids == want_ids);
}
