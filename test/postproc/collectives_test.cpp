#include <catch2/catch.hpp>

#include "postproc/analyze.hpp"
#include "test/postproc/fixture.hpp"
#include "trace/tool_error.hpp"

using namespace mpior;
using namespace mpior::test;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using trace::Kind;

namespace {

std::vector<RankBuilder> job(int32_t size) {
  std::vector<RankBuilder> ranks;
  for (int32_t r = 0; r < size; ++r) ranks.emplace_back(r, size);
  return ranks;
}

postproc::Analysis analyze_all(std::vector<RankBuilder>& ranks) {
  std::vector<trace::RankTrace> traces;
  for (RankBuilder& b : ranks) traces.push_back(b.finish());
  auto set = make_set(std::move(traces));
  return postproc::analyze(set);
}

// Every rank: barrier, bcast from 0, allreduce, a dup (collective on world),
// a barrier on the dup and its free.
std::vector<RankBuilder> agreeing(int32_t size) {
  auto ranks = job(size);
  for (auto& b : ranks) {
    b.collective(Kind::MPI_Barrier, 0);
    b.collective(Kind::MPI_Bcast, 0, 0);
    b.collective(Kind::MPI_Allreduce, 0);
    std::vector<int32_t> all;
    for (int32_t r = 0; r < size; ++r) all.push_back(r);
    int32_t dup = b.comm(trace::CommOrigin::dup, 0, 3, all);
    b.create(Kind::MPI_Comm_dup, 0, dup);
    b.collective(Kind::MPI_Barrier, dup);
    b.call(Kind::MPI_Comm_free, {{trace::arg::comm, dup}});
  }
  return ranks;
}

}  // namespace

TEST_CASE("collective instances are numbered per communicator", "[postproc][collectives]") {
  auto ranks = agreeing(4);
  auto a = analyze_all(ranks);
  int32_t dup = a.comms.local_to_global[0][2];
  REQUIRE(a.collectives.per_comm[0] == 4);            // barrier, bcast, allreduce, dup
  REQUIRE(a.collectives.per_comm[size_t(dup)] == 2);  // barrier, free
  REQUIRE(a.collectives.instances == 6);
}

// An MPI_Abort or a killed rank stops the others wherever they were: what
// they did is still summarised, and the mismatch says why no plan is made.
TEST_CASE("in a job that did not end, members that disagree are the analysis's finding", "[postproc][collectives]") {
  auto ranks = agreeing(3);
  ranks[1].collective(Kind::MPI_Barrier, 0);
  std::vector<trace::RankTrace> traces;
  for (RankBuilder& b : ranks) traces.push_back(b.finish());
  auto set = make_set(std::move(traces));
  set.job.state = trace::JobState::running;
  postproc::Analysis a = postproc::analyze(set);
  REQUIRE_THAT(a.unmatched, Contains("communicator 0: rank 0 made 4 collective calls, rank 1 made 5"));
  REQUIRE(a.summary.ranks.size() == 3);
  set.job.state = trace::JobState::complete;
  REQUIRE_THROWS_WITH(postproc::analyze(set), Contains("rank 1 made 5"));
}

TEST_CASE("a large-count variant is the same collective", "[postproc][collectives]") {
  auto ranks = job(2);
  ranks[0].collective(Kind::MPI_Bcast, 0, 1);
  ranks[1].collective(Kind::MPI_Bcast_c, 0, 1);
  REQUIRE(analyze_all(ranks).collectives.instances == 1);
}

TEST_CASE("members that disagree on a collective are rejected", "[postproc][collectives]") {
  SECTION("different operations") {
    auto ranks = job(4);
    for (int32_t r = 0; r < 4; ++r) {
      ranks[size_t(r)].collective(Kind::MPI_Barrier, 0);
      if (r == 3)
        ranks[size_t(r)].collective(Kind::MPI_Barrier, 0);
      else
        ranks[size_t(r)].collective(Kind::MPI_Bcast, 0, 0);
    }
    REQUIRE_THROWS_WITH(analyze_all(ranks),
                        Equals("collective #1 on communicator 0: rank 0 called MPI_Bcast (root 0), rank 3 called "
                               "MPI_Barrier"));
  }
  SECTION("different roots") {
    auto ranks = job(3);
    for (int32_t r = 0; r < 3; ++r) ranks[size_t(r)].collective(Kind::MPI_Reduce, 0, r == 2 ? 1 : 0);
    REQUIRE_THROWS_WITH(analyze_all(ranks), Equals("collective #0 on communicator 0: rank 0 called MPI_Reduce (root "
                                                   "0), rank 2 called MPI_Reduce (root 1)"));
  }
  SECTION("different numbers of calls") {
    auto ranks = agreeing(3);
    ranks[1].collective(Kind::MPI_Barrier, 0);
    REQUIRE_THROWS_WITH(analyze_all(ranks), Contains("communicator 0: rank 0 made 4 collective calls, rank 1 made 5") &&
                                                Contains("collective #4") && Contains("rank 1 called MPI_Barrier"));
  }
  SECTION("on a derived communicator, named by its global id") {
    auto ranks = agreeing(2);
    ranks[0].collective(Kind::MPI_Barrier, 2);
    ranks[1].collective(Kind::MPI_Allreduce, 2);
    int32_t dup = 0;
    {
      auto ok = agreeing(2);
      dup = analyze_all(ok).comms.local_to_global[0][2];
    }
    REQUIRE_THROWS_WITH(analyze_all(ranks), Equals("collective #2 on communicator " + std::to_string(dup) +
                                                   ": rank 0 called MPI_Barrier, rank 1 called MPI_Allreduce"));
  }
}

// A rank whose main thread frees a communicator that a second thread used for
// barriers: the loop-compressed timing may put the free's start before the
// barriers', but the tracer's numbers say the barriers came first.
TEST_CASE("collectives of several threads on one communicator follow the tracer's numbers", "[postproc][collectives]") {
  auto ranks = job(2);
  for (int32_t r = 0; r < 2; ++r) {
    RankBuilder& b = ranks[size_t(r)];
    int32_t dup = b.comm(trace::CommOrigin::dup, 0, 0, {0, 1});
    b.create(Kind::MPI_Comm_dup, 0, dup);
    b.thread(1);
    b.at(r == 0 ? 100000 : 2000);  // rank 0's barriers start after its free
    b.call(Kind::MPI_Barrier, {{trace::arg::comm, dup}, {trace::arg::coll_seq, 0}});
    b.call(Kind::MPI_Barrier, {{trace::arg::comm, dup}, {trace::arg::coll_seq, 1}});
    b.thread(0);
    b.at(50000);
    b.call(Kind::MPI_Comm_free, {{trace::arg::comm, dup}, {trace::arg::coll_seq, 2}});
  }
  auto a = analyze_all(ranks);
  REQUIRE(a.collectives.per_comm[size_t(a.comms.local_to_global[0][2])] == 3);

  SECTION("a rank that numbers them otherwise is still rejected") {
    auto bad = job(2);
    for (int32_t r = 0; r < 2; ++r) {
      RankBuilder& b = bad[size_t(r)];
      int32_t dup = b.comm(trace::CommOrigin::dup, 0, 0, {0, 1});
      b.create(Kind::MPI_Comm_dup, 0, dup);
      b.call(Kind::MPI_Barrier, {{trace::arg::comm, dup}, {trace::arg::coll_seq, r == 1 ? 1 : 0}});
      b.call(Kind::MPI_Comm_free, {{trace::arg::comm, dup}, {trace::arg::coll_seq, r == 1 ? 0 : 1}});
    }
    REQUIRE_THROWS_WITH(analyze_all(bad), Contains("collective #0 on communicator 2: rank 0 called MPI_Barrier, "
                                                   "rank 1 called MPI_Comm_free"));
  }
}
