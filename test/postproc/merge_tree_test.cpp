// The tree reduction (merge_tree.hpp): whatever the radix and rank count,
// every rank reads back its own events from the root's streams, and an SPMD
// job reduces to the streams the flat merge makes.
#include "merge_tree.hpp"

#include <fcntl.h>

#include <catch2/catch.hpp>

#include "fixture.hpp"
#include "merge.hpp"
#include "merge_check.hpp"
#include "spmd_rank.hpp"

using namespace mpior;
using namespace mpior::test;
using trace::Kind;
namespace arg = trace::arg;

namespace {

trace::RankTrace rank_trace(int32_t r, int32_t size, bool irregular) { return spmd_rank_trace(r, size, irregular); }

void check_every_rank(const std::vector<trace::RankTrace>& ranks, const std::vector<trace::Stream>& merged) {
  for (const trace::RankTrace& t : ranks)
    for (const trace::Stream& own : t.streams) {
      const trace::Stream* found = nullptr;
      for (const trace::Stream& m : merged)
        if (m.thread == own.thread && trace::seq_contains(m.view(m.ranks), t.process.rank)) {
          REQUIRE(found == nullptr);  // one stream per rank and thread
          found = &m;
        }
      REQUIRE(found != nullptr);
      INFO("rank " << t.process.rank << " thread " << own.thread);
      REQUIRE(postproc::first_difference(own, *found, t.process.rank) == "");
    }
}

}  // namespace

TEST_CASE("a tree reduction reads back every rank's events", "[postproc][merge][tree]") {
  for (bool irregular : {false, true})
    for (int32_t size : {1, 2, 7, 13, 32})
      for (size_t radix : {2, 3, 8})
        for (size_t expand : {size_t(1), size_t(4), size_t(256)}) {
          INFO("ranks " << size << " radix " << radix << " expand " << expand << (irregular ? " irregular" : " SPMD"));
          std::vector<trace::RankTrace> ranks;
          for (int32_t r = 0; r < size; ++r) ranks.push_back(rank_trace(r, size, irregular));
          postproc::TreeStats stats;
          std::vector<trace::Stream> root = postproc::reduce_tree(
              size_t(size), [&](size_t i) { return ranks[i].streams; }, radix, &stats);
          check_every_rank(ranks, root);
          std::vector<trace::Stream> flat;
          for (const trace::RankTrace& t : ranks) flat.insert(flat.end(), t.streams.begin(), t.streams.end());
          flat = postproc::merge_streams(std::move(flat));
          if (!irregular) REQUIRE(root.size() == 1);
          REQUIRE(root.size() <= flat.size() + (irregular ? 4 : 0));
          if (!irregular && expand == 256) REQUIRE(root[0].ranked.size() == flat[0].ranked.size());
          if (size > 1) REQUIRE(stats.steps >= 1);
        }
}

TEST_CASE("an SPMD tree root is as small as the flat merge's", "[postproc][merge][tree]") {
  constexpr int32_t kRanks = 64;
  std::vector<trace::RankTrace> ranks;
  for (int32_t r = 0; r < kRanks; ++r) ranks.push_back(rank_trace(r, kRanks, false));
  std::vector<trace::Stream> root = postproc::reduce_tree(
      kRanks, [&](size_t i) { return ranks[i].streams; }, 4);
  std::vector<trace::Stream> flat;
  for (const trace::RankTrace& t : ranks) flat.insert(flat.end(), t.streams.begin(), t.streams.end());
  flat = postproc::merge_streams(std::move(flat));
  REQUIRE(root.size() == 1);
  REQUIRE(flat.size() == 1);
  REQUIRE(root[0].ranked.size() == flat[0].ranked.size());
  REQUIRE(root[0].values.items().size() <= flat[0].values.items().size() + 8);
}
