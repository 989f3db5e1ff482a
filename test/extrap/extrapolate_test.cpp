// Whole plans extrapolated: the scalaioextrap Table I strong-scaling offsets
// reproduced exactly for 8 ranks, and the refusals.
#include "extrapolate.hpp"

#include <fcntl.h>

#include <catch2/catch.hpp>

#include "analyze.hpp"
#include "behalf.hpp"
#include "cursor.hpp"
#include "extrap_error.hpp"
#include "fixture.hpp"
#include "plan.hpp"

using namespace mpior;
using Catch::Matchers::Contains;

namespace {

// for (i = 0; i < 3; i++) { offset = rank*(960/n) + 960*i; pwrite(offset) }
// plus, on every rank, its own file out_<rank>.
extrap::Input table1_run(int32_t n, const std::string& cmdline = "./io-sample") {
  std::vector<trace::RankTrace> ranks;
  for (int32_t r = 0; r < n; ++r) {
    test::RankBuilder b(r, n);
    int32_t shared = b.file("/data/table1.dat", O_RDWR);
    int32_t own = b.file("/data/out_" + std::to_string(r), O_WRONLY | O_CREAT);
    b.open(shared, 10, O_RDWR, 10);
    b.open(own, 11, O_WRONLY | O_CREAT, 11);
    for (int64_t i = 0; i < 3; ++i) b.pwrite(shared, 10, r * (960 / n) + 960 * i, 960 / n, 960 / n);
    b.pwrite(own, 11, 0, 4096, 4096);
    ranks.push_back(b.finish());
    ranks.back().process.cmdline = cmdline;
  }
  postproc::TraceSet set = test::make_set(std::move(ranks));
  set.job.cmdline = cmdline;
  postproc::Analysis a = postproc::analyze(set);
  postproc::move_sends_to_senders(set, a.comms);
  return {"t" + std::to_string(n), postproc::build_plan(std::move(set), a), n};
}

std::vector<int64_t> offsets_of(const trace::Plan& p, int32_t rank, std::string* own_file) {
  std::vector<int64_t> out;
  for (const trace::Stream& s : p.streams) {
    if (!trace::seq_contains(s.view(s.ranks), rank)) continue;
    trace::EventCursor c(s, rank);
    trace::Event ev;
    while (c.next(ev))
      if (ev.kind == trace::Kind::pwrite && ev.args[trace::arg::count] != 4096)
        out.push_back(ev.args[trace::arg::offset]);
      else if (ev.kind == trace::Kind::pwrite)
        *own_file = p.files[size_t(p.ranks[size_t(rank)].files[size_t(ev.args[trace::arg::file])])].path;
  }
  return out;
}

}  // namespace

TEST_CASE("Table I: strong-scaling offsets over ranks and iterations, extrapolated to 8 ranks exactly") {
  trace::Plan p = extrap::extrapolate({table1_run(3), table1_run(4), table1_run(6)}, 8);
  REQUIRE(p.ranks.size() == 8);
  for (int32_t r = 0; r < 8; ++r) {
    std::string own;
    std::vector<int64_t> got = offsets_of(p, r, &own);
    INFO("rank " << r);
    CHECK(got == std::vector<int64_t>{r * 120, r * 120 + 960, r * 120 + 1920});
    CHECK(own == "/data/out_" + std::to_string(r));
  }
  CHECK(p.extrap.target == 8);
  CHECK(p.extrap.input_ranks == std::vector<int32_t>{3, 4, 6});
  bool strong = false;
  for (const trace::ExtrapNote& n : p.extrap.notes) strong = strong || n.model.find("960*r/n") != std::string::npos;
  CHECK(strong);
}

TEST_CASE("extrapolation refuses what it cannot do right") {
  SECTION("two runs only") {
    REQUIRE_THROWS_WITH(extrap::extrapolate({table1_run(3), table1_run(4)}, 8), Contains("three or more"));
  }
  SECTION("different programs") {
    REQUIRE_THROWS_WITH(extrap::extrapolate({table1_run(3), table1_run(4), table1_run(6, "./other")}, 8),
                        Contains("not the same program") && Contains("./other"));
  }
  SECTION("a rank count that makes a size fractional") {
    REQUIRE_THROWS_WITH(extrap::extrapolate({table1_run(3), table1_run(4), table1_run(6)}, 7),
                        Contains("not an integer") && Contains("pwrite"));
  }
  SECTION("two runs of one rank count") {
    REQUIRE_THROWS_WITH(extrap::extrapolate({table1_run(3), table1_run(4), table1_run(4)}, 8),
                        Contains("distinct rank counts"));
  }
}
