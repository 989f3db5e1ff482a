// Whole plans extrapolated: the scalaioextrap Table I strong-scaling offsets
// reproduced exactly for 8 ranks, and the refusals.
#include "extrap/extrapolate.hpp"

#include <fcntl.h>

#include <catch2/catch.hpp>

#include "postproc/analyze.hpp"
#include "postproc/behalf.hpp"
#include "postproc/plan.hpp"
#include "test/extrap/input_of.hpp"
#include "test/postproc/fixture.hpp"
#include "trace/cursor.hpp"
#include "trace/tool_error.hpp"

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
  }
  return test::input_of(std::move(ranks), cmdline, "t" + std::to_string(n));
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

namespace {

// A solver's run: every rank writes its block of a shared file; rank 0 prints
// a line per step whose length follows no model (times, checksums) and every
// rank reads a system file it did not make (as MPICH reads /proc/<pid>/stat),
// whose name and length change from run to run.
extrap::Input solver_run(int32_t n, bool irregular_data = false) {
  std::vector<trace::RankTrace> ranks;
  for (int32_t r = 0; r < n; ++r) {
    test::RankBuilder b(r, n);
    int32_t data = b.file("/data/solver.dat", O_WRONLY | O_CREAT);
    int32_t stat = b.file("/proc/" + std::to_string(1000 + 37 * n + r) + "/stat", O_RDONLY);
    b.site(0x10);
    b.open(stat, 9, O_RDONLY, 9);
    b.site(0x11);
    b.call(trace::Kind::read,
           {{trace::arg::handle, 9}, {trace::arg::file, stat}, {trace::arg::offset, 0}, {trace::arg::count, 4096}},
           311 + (r + n) % 2);
    b.site(0x12);
    b.open(data, 10, O_WRONLY | O_CREAT, 10);
    int64_t printed = 0;
    for (int64_t step = 0; step < 3; ++step) {
      b.site(0x13);
      b.pwrite(data, 10, (step * n + r) * 4096, 4096 + (irregular_data ? r * r : 0), 4096);
      if (r != 0) continue;
      int64_t len = 20 + (n * 7 + step * 3) % 5;  // "iter %d sum %.6f\n"
      b.site(0x14);
      b.call(trace::Kind::fprintf,
             {{trace::arg::handle, 1}, {trace::arg::file, 1}, {trace::arg::offset, printed}, {trace::arg::count, -1}},
             len);
      printed += len;
    }
    ranks.push_back(b.finish());
  }
  return test::input_of(std::move(ranks), "./solver", "s" + std::to_string(n));
}

std::vector<extrap::Input> solver_runs(bool irregular_data = false) {
  return {solver_run(4, irregular_data), solver_run(5, irregular_data), solver_run(6, irregular_data),
          solver_run(7, irregular_data)};
}

}  // namespace

TEST_CASE("incidentals take the best fit with a warning; structure stays exact") {
  std::vector<std::string> warnings;
  trace::Plan p = extrap::extrapolate(solver_runs(), 64, {}, &warnings);
  REQUIRE(p.ranks.size() == 64);
  // The printed bytes, the stdout offsets, the system file's read and name.
  std::string all;
  for (const std::string& w : warnings) all += w + "\n";
  INFO(all);
  // The printed positions are counted in one warning, not listed.
  CHECK_THAT(all, Contains("1 position writing to <stdout> or <stderr> approximated"));
  CHECK_THAT(all, !Contains("fprintf at call site"));
  CHECK_THAT(all, Contains("read at call site 0x11") && Contains("neither created nor wrote"));
  CHECK_THAT(all, Contains("/stat") && Contains("n=4 rank 0: 311"));
  size_t approx = 0;
  for (const trace::ExtrapNote& n : p.extrap.notes) approx += n.name == trace::kApproximateModel;
  CHECK(approx >= 3);
  // Data-file offsets exact at 64 ranks; printed lengths rounded, in range.
  for (int32_t r : {0, 1, 63}) {
    for (const trace::Stream& s : p.streams) {
      if (!trace::seq_contains(s.view(s.ranks), r)) continue;
      trace::EventCursor c(s, r);
      trace::Event ev;
      std::vector<int64_t> offsets;
      while (c.next(ev)) {
        if (ev.kind == trace::Kind::pwrite) offsets.push_back(ev.args[trace::arg::offset]);
        if (ev.kind == trace::Kind::fprintf) CHECK((ev.ret >= 20 && ev.ret <= 24));
        if (ev.kind == trace::Kind::read) CHECK((ev.ret >= 311 && ev.ret <= 312));
      }
      CHECK(offsets == std::vector<int64_t>{r * 4096, (64 + r) * 4096, (128 + r) * 4096});
    }
  }
}

TEST_CASE("--strict refuses incidentals; structure no model fits says what would resolve it") {
  extrap::Options strict;
  strict.strict = true;
  REQUIRE_THROWS_WITH(extrap::extrapolate(solver_runs(), 64, strict), Contains("no model fits"));
  REQUIRE_THROWS_WITH(extrap::extrapolate(solver_runs(true), 64), Contains("pwrite") && Contains("structure") &&
                                                                      Contains("one more traced rank count") &&
                                                                      Contains("MPIOR_PRUNE=0"));
}
