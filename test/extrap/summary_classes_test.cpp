// The summary of an extrapolated plan walks one rank per class of ranks whose
// calls its totals cannot tell apart: the totals must equal those of walking
// every rank, and the classes must collapse where ranks differ only in file
// offsets and in the files their tables name.
#include "postproc/summary_classes.hpp"

#include <fcntl.h>

#include <catch2/catch.hpp>

#include "extrap/extrapolate.hpp"
#include "postproc/analyze.hpp"
#include "postproc/behalf.hpp"
#include "postproc/plan.hpp"
#include "postproc/plan_summary.hpp"
#include "test/extrap/input_of.hpp"
#include "test/postproc/fixture.hpp"

using namespace mpior;

namespace {

// Every rank writes block r of a shared file twice and its own file out_<r>;
// with rank_bytes, its own file gets 100 + 10 r bytes (a count by rank).
extrap::Input run(int32_t n, bool rank_bytes) {
  std::vector<trace::RankTrace> ranks;
  for (int32_t r = 0; r < n; ++r) {
    test::RankBuilder b(r, n);
    int32_t shared = b.file("/data/shared.dat", O_RDWR);
    int32_t own = b.file("/data/out_" + std::to_string(r), O_WRONLY | O_CREAT);
    b.open(shared, 10, O_RDWR, 10);
    b.open(own, 11, O_WRONLY | O_CREAT, 11);
    for (int64_t i = 0; i < 2; ++i) b.pwrite(shared, 10, r * 4096 + i * 4096 * n, 4096, 4096);
    int64_t bytes = rank_bytes ? 100 + 10 * r : 512;
    b.pwrite(own, 11, 0, bytes, bytes);
    ranks.push_back(b.finish());
  }
  return test::input_of(std::move(ranks), "./io", "t" + std::to_string(n));
}

void require_equal(const postproc::Summary& a, const postproc::Summary& b) {
  REQUIRE(a.ranks.size() == b.ranks.size());
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    INFO("rank " << r);
    REQUIRE(a.ranks[r].io_ns == b.ranks[r].io_ns);
    REQUIRE(a.ranks[r].mpi_ns == b.ranks[r].mpi_ns);
    REQUIRE(a.ranks[r].traced_ns == b.ranks[r].traced_ns);
  }
  for (size_t k = 0; k < a.kinds.size(); ++k) {
    INFO("kind " << trace::name(trace::Kind(k)));
    REQUIRE(a.kinds[k].calls == b.kinds[k].calls);
    REQUIRE(a.kinds[k].time_ns == b.kinds[k].time_ns);
    REQUIRE(a.kinds[k].bytes == b.kinds[k].bytes);
  }
  REQUIRE(a.files.size() == b.files.size());
  for (size_t f = 0; f < a.files.size(); ++f) {
    INFO("file " << f);
    REQUIRE(a.files[f].bytes_written == b.files[f].bytes_written);
    REQUIRE(a.files[f].ops == b.files[f].ops);
  }
  REQUIRE(a.mpi_logged == b.mpi_logged);
}

size_t classes(const trace::Plan& p) {
  size_t n = 0;
  for (const trace::Stream& s : p.streams) n += postproc::summary_rank_classes(p, s).size();
  return n;
}

}  // namespace

TEST_CASE("an extrapolated plan's summary walks a class of ranks once, with every rank's totals") {
  constexpr int32_t kTarget = 600;
  SECTION("ranks that differ in offsets and file names: a few classes") {
    trace::Plan p = extrap::extrapolate({run(3, false), run(4, false), run(6, false)}, kTarget);
    REQUIRE(classes(p) <= 4);
    postproc::Summary by_class = postproc::plan_totals(p, "p"), every = postproc::plan_totals(p, "p", true);
    require_equal(by_class, every);
    // Each rank's own file holds its 512 bytes; the shared one all blocks.
    REQUIRE(by_class.kinds[size_t(trace::Kind::pwrite)].bytes == kTarget * (2 * 4096 + 512));
  }
  SECTION("ranks that write a count by rank: a class each") {
    trace::Plan p = extrap::extrapolate({run(3, true), run(4, true), run(6, true)}, kTarget);
    REQUIRE(classes(p) >= size_t(kTarget));
    postproc::Summary by_class = postproc::plan_totals(p, "p"), every = postproc::plan_totals(p, "p", true);
    require_equal(by_class, every);
    REQUIRE(by_class.kinds[size_t(trace::Kind::pwrite)].bytes ==
            kTarget * 2 * 4096 + kTarget * 100 + 10 * kTarget * (kTarget - 1) / 2);
  }
}
