#include <catch2/catch.hpp>

#include "postproc/analyze.hpp"
#include "postproc/entered_collectives.hpp"
#include "test/postproc/fixture.hpp"
#include "trace/tool_error.hpp"

using namespace mpior;
using namespace mpior::test;
using Catch::Matchers::Contains;
using trace::Kind;

namespace {

// Two ranks: a barrier and a bcast from 0; rank 1's trace lacks the last
// `lacks` of them. unfinished: which ranks ended abnormally.
postproc::TraceSet crashed(int lacks, bool rank1_unfinished, bool rank0_unfinished = true) {
  std::vector<trace::RankTrace> traces;
  for (int32_t r = 0; r < 2; ++r) {
    RankBuilder b(r, 2);
    int calls = r == 1 ? 2 - lacks : 2;
    if (calls > 0) b.collective(Kind::MPI_Barrier, 0);
    if (calls > 1) b.collective(Kind::MPI_Bcast, 0, 0);
    trace::RankTrace t = b.finish();
    t.process.finished = !(r == 1 ? rank1_unfinished : rank0_unfinished);
    traces.push_back(std::move(t));
  }
  return make_set(std::move(traces));
}

}  // namespace

TEST_CASE("a dead rank's trailing collectives are completed as entered", "[postproc][collectives]") {
  SECTION("one") {
    auto set = crashed(1, true);
    postproc::complete_entered_collectives(set);
    REQUIRE(set.entered.size() == 1);
    CHECK(set.entered[0].rank == 1);
    CHECK(set.entered[0].calls == 1);
    CHECK(set.entered[0].call == "MPI_Bcast");
    CHECK_THAT(set.warnings.back(), Contains("rank 1 died inside a collective: its trace lacks the last 1"));
    REQUIRE(postproc::analyze(set).collectives.instances == 2);
  }
  SECTION("both") {
    auto set = crashed(2, true);
    postproc::complete_entered_collectives(set);
    REQUIRE(set.entered.size() == 1);
    CHECK(set.entered[0].calls == 2);
    CHECK(set.entered[0].call == "MPI_Barrier");
    REQUIRE(postproc::analyze(set).collectives.instances == 2);
  }
}

TEST_CASE("only an unfinished rank's collectives are completed", "[postproc][collectives]") {
  SECTION("a finished rank lacking one is refused") {
    auto set = crashed(1, false);
    postproc::complete_entered_collectives(set);
    CHECK(set.entered.empty());
    // A job that did not end (rank 0 unfinished): summarised, no plan.
    REQUIRE_THAT(postproc::analyze(set).unmatched, Contains("rank 0 made 2 collective calls, rank 1 made 1"));
  }
  SECTION("a job where every rank finished is left alone") {
    auto set = crashed(1, false, false);
    postproc::complete_entered_collectives(set);
    CHECK(set.entered.empty());
  }
}
