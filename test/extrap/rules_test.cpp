// Rank rules, file names and communicator members at another rank count.
#include <catch2/catch.hpp>

#include "extrap/comm_models.hpp"
#include "extrap/file_names.hpp"
#include "extrap/models.hpp"
#include "extrap/rank_rules.hpp"
#include "trace/tool_error.hpp"

using namespace mpior::extrap;
using Catch::Matchers::Contains;

namespace {

// Class of each rank of n under `cls`, as per-class rank lists over ns.
std::vector<std::vector<std::vector<int64_t>>> sets_of(const std::vector<int64_t>& ns, size_t classes,
                                                       int (*cls)(int64_t, int64_t)) {
  std::vector<std::vector<std::vector<int64_t>>> out(classes, std::vector<std::vector<int64_t>>(ns.size()));
  for (size_t i = 0; i < ns.size(); ++i)
    for (int64_t r = 0; r < ns[i]; ++r) out[size_t(cls(r, ns[i]))][i].push_back(r);
  return out;
}

// rank 0 / the last rank / last and a leader / other leaders (every 2nd) / the rest.
int scaling_class(int64_t r, int64_t n) {
  if (r == 0) return 0;
  if (r == n - 1) return r % 2 == 0 ? 2 : 1;
  return r % 2 == 0 ? 3 : 4;
}

}  // namespace

TEST_CASE("rank 0, the last rank, group leaders and the others at a rank count never traced") {
  std::vector<int64_t> ns = {4, 5, 6, 7};
  auto sets = sets_of(ns, 5, scaling_class);
  std::vector<RankRule> rules = rank_rules(ns, sets, {"zero", "last", "last leader", "leader", "other"});
  for (int64_t n : {8, 9, 64, 8191, 8192}) {
    std::vector<int32_t> got = assign_ranks(rules, n);
    for (int64_t r = 0; r < n; ++r) REQUIRE(got[size_t(r)] == scaling_class(r, n));
  }
}

// HDF5's collective metadata writers: a fixed number of first ranks (one
// entry each), every rank at the smallest count traced.
int first_five_class(int64_t r, int64_t) { return r == 0 ? 0 : r < 6 ? 1 : 2; }

// A ring whose rank 0 writes: its neighbours 1 and n-1 keep their exchanges
// with it, the ranks between prune theirs.
int ring_class(int64_t r, int64_t n) { return r == 0 ? 0 : r == 1 ? 1 : r == n - 1 ? 2 : 3; }

TEST_CASE("a class that is one rank at every input is that rank, not every k-th") {
  std::vector<int64_t> ns = {4, 5, 6};
  auto sets = sets_of(ns, 4, ring_class);
  std::vector<RankRule> rules = rank_rules(ns, sets, {"zero", "one", "last", "middle"});
  for (int64_t n : {8, 9, 64, 8192}) {
    std::vector<int32_t> got = assign_ranks(rules, n);
    for (int64_t r = 0; r < n; ++r) REQUIRE(got[size_t(r)] == ring_class(r, n));
  }
}

// A 2 x 2 x n/4 grid whose rank 0 writes: its neighbours 1, n/4-1, n/4 and
// n/2 keep their exchanges with it.
int grid_class(int64_t r, int64_t n) {
  if (r == 0 || r == 1) return int(r);
  if (r == n / 4 - 1) return 2;
  if (r == n / 4) return 3;
  return r == n / 2 ? 4 : 5;
}

TEST_CASE("ranks at a fixed fraction of the rank count: a grid's neighbours of rank 0") {
  std::vector<int64_t> ns = {12, 16, 20};
  auto sets = sets_of(ns, 6, grid_class);
  std::vector<RankRule> rules = rank_rules(ns, sets, {"zero", "one", "z down", "y", "x", "others"});
  for (int64_t n : {32, 64, 8192}) {
    std::vector<int32_t> got = assign_ranks(rules, n);
    for (int64_t r = 0; r < n; ++r) REQUIRE(got[size_t(r)] == grid_class(r, n));
  }
}

TEST_CASE("a fixed set of first ranks that was every rank at the smallest count traced") {
  std::vector<int64_t> ns = {6, 7, 8, 9};
  auto sets = sets_of(ns, 3, first_five_class);
  std::vector<RankRule> rules = rank_rules(ns, sets, {"zero", "writers", "others"});
  for (int64_t n : {10, 16, 8192}) {
    std::vector<int32_t> got = assign_ranks(rules, n);
    for (int64_t r = 0; r < n; ++r) REQUIRE(got[size_t(r)] == first_five_class(r, n));
  }
}

// test/apps/hdf5_steps at file close: 8 metadata entries dealt over the
// ranks; rank 0 does more besides, the ranks with two entries or more loop
// over them, the others write one (past 8 ranks, those beyond the 8th write
// none: a stream no input showed, which the rules still give the last class).
int hdf5_close_class(int64_t r, int64_t n) { return r == 0 ? 0 : share_of(8, r, n) >= 2 ? 1 : 2; }

TEST_CASE("the ranks with a loop of a fixed total's entries dealt over the ranks") {
  std::vector<int64_t> ns = {3, 4, 5, 6};
  auto sets = sets_of(ns, 3, hdf5_close_class);
  CHECK(sets[1][0] == std::vector<int64_t>{1, 2});
  CHECK(sets[1][3] == std::vector<int64_t>{1});
  std::vector<RankRule> rules = rank_rules(ns, sets, {"zero", "loop", "once"});
  CHECK(rules[1].pred.text() == "share(8,r,n) >= 2");
  for (int64_t n : {7, 8, 16}) {
    std::vector<int32_t> got = assign_ranks(rules, n);
    for (int64_t r = 0; r < n; ++r) REQUIRE(got[size_t(r)] == hdf5_close_class(r, n));
  }
}

TEST_CASE("rank lists no rule separates are refused with the lists") {
  // Ranks {1, 2} at n=4 and {1, 4} at n=6: no rule of the family.
  std::vector<int64_t> ns = {4, 6};
  std::vector<std::vector<std::vector<int64_t>>> sets = {{{0, 3}, {0, 2, 3, 5}}, {{1, 2}, {1, 4}}};
  REQUIRE_THROWS_WITH(rank_rules(ns, sets, {"a", "b"}), Contains("n=4: 1,2") && Contains("n=6: 1,4"));
}

TEST_CASE("file names keep their text and zero padding, numbers follow the rank") {
  std::vector<std::string> paths;
  std::vector<NameSample> samples;
  for (int64_t n : {4, 5, 6})
    for (int64_t r = 0; r < n; ++r)
      paths.push_back("/scratch/run" + std::to_string(n) + "/out_" + std::string(r < 10 ? "000" : "00") +
                      std::to_string(r) + ".dat");
  size_t k = 0;
  for (int64_t n : {4, 5, 6})
    for (int64_t r = 0; r < n; ++r) samples.push_back({r, n, &paths[k++]});
  std::string why;
  std::optional<NameModel> m = NameModel::fit(samples, &why);
  REQUIRE(m);
  CHECK(m->render(12, 8192) == "/scratch/run8192/out_0012.dat");
  CHECK(m->render(12345, 16384) == "/scratch/run16384/out_12345.dat");
  std::string other = "/scratch/elsewhere.dat";
  samples.back().path = &other;
  CHECK_FALSE(NameModel::fit(samples, &why));
  CHECK_THAT(why, Contains("differ in more than their numbers"));
}

TEST_CASE("shared names stay, group names follow r / k") {
  std::string shared = "/data/shared.h5";
  std::vector<std::string> groups;
  for (int g = 0; g < 4; ++g) groups.push_back("/data/group_" + std::to_string(g) + ".dat");
  std::vector<NameSample> s = {{0, 4, &shared}, {3, 4, &shared}, {0, 6, &shared}, {5, 6, &shared}};
  std::string why;
  CHECK(NameModel::fit(s, &why)->render(100, 8192) == "/data/shared.h5");
  std::vector<NameSample> leaders = {
      {0, 4, &groups[0]}, {2, 4, &groups[1]}, {0, 6, &groups[0]}, {2, 6, &groups[1]}, {4, 6, &groups[2]}};
  CHECK(NameModel::fit(leaders, &why)->render(6, 8) == "/data/group_3.dat");
}

TEST_CASE("communicators: blocks of k, strides, world and self at another rank count") {
  std::vector<std::vector<int32_t>> lists;
  std::vector<CommSample> block, world;
  lists.reserve(64);
  for (int64_t n : {4, 5, 6, 7})
    for (int64_t r = 0; r < n; ++r) {
      std::vector<int32_t> m;
      for (int64_t x = r / 4 * 4; x < std::min(r / 4 * 4 + 4, n); ++x) m.push_back(int32_t(x));
      lists.push_back(m);
      block.push_back({r, n, &lists.back()});
      std::vector<int32_t> all;
      for (int64_t x = 0; x < n; ++x) all.push_back(int32_t(x));
      lists.push_back(all);
      world.push_back({r, n, &lists.back()});
    }
  std::optional<CommModel> b = CommModel::fit(block);
  REQUIRE(b);
  CHECK(b->members(b->instance(13, 8192), 8192) == std::vector<int32_t>{12, 13, 14, 15});
  CHECK(b->instance(13, 8192) == b->instance(15, 8192));
  CHECK_FALSE(b->instance(13, 8192) == b->instance(16, 8192));
  std::optional<CommModel> w = CommModel::fit(world);
  REQUIRE(w);
  CHECK(w->members(w->instance(5, 8), 8).size() == 8);
  CHECK(w->describe() == "all ranks");
}
