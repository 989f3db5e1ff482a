// Rank lists kept as runs through the merge (rank_runs.hpp, issue 19): read
// off a stored list without expanding it, joined member after member as the
// merge joins them, and stored again item for item as add_rank_list stores
// the same ranks, for contiguous, strided, interleaved and irregular lists.
#include "merge/rank_runs.hpp"

#include <catch2/catch.hpp>
#include <random>

#include "merge/merge_params.hpp"

using namespace mpior;
using merge::RankRuns;

namespace {

std::vector<trace::SeqItem> stored(std::span<const int32_t> ranks) {
  trace::SeqArena arena;
  std::span<const trace::SeqItem> v = arena.view(merge::add_rank_list(arena, ranks));
  return {v.begin(), v.end()};
}

std::vector<trace::SeqItem> stored(const RankRuns& runs) {
  trace::SeqArena arena;
  std::span<const trace::SeqItem> v = arena.view(runs.store(arena));
  return {v.begin(), v.end()};
}

// Ascending lists of every kind over ranks 0..n-1.
std::vector<std::vector<int32_t>> rank_lists(int32_t n, std::mt19937_64& rng) {
  std::vector<std::vector<int32_t>> out(9);
  for (int32_t r = 0; r < n; ++r) {
    out[0].push_back(r);                                                                  // every rank
    if (r % 16 == 5) out[1].push_back(r);                                                 // strided
    if (r % 2 == 0) out[2].push_back(r);                                                  // even
    if (r % 2 == 1) out[3].push_back(r);                                                  // odd
    if ((r / 64) % 2 == 0) out[4].push_back(r);                                           // blocks with gaps
    if (rng() % 10 < 3) out[5].push_back(r);                                              // irregular
    if (r < n / 2 || (r < 3 * n / 4 ? r % 3 == 0 : rng() % 2 == 0)) out[6].push_back(r);  // mixed
    if (r % 5 < 2) out[7].push_back(r);                                                   // pairs
    if ((r / 7) % 3 == 0 && r % 7 < 3) out[8].push_back(r);  // runs of equal length (nested loops)
  }
  out.push_back({n - 1});
  return out;
}

}  // namespace

TEST_CASE("rank runs store a list as add_rank_list does, also joined from parts", "[postproc][merge][ranks]") {
  std::mt19937_64 rng(19);
  for (int32_t n : {1, 2, 3, 7, 64, 300, 4096}) {
    std::vector<std::vector<int32_t>> lists = rank_lists(n, rng);
    for (size_t l = 0; l < lists.size(); ++l) {
      const std::vector<int32_t>& list = lists[l];
      if (list.empty()) continue;
      INFO("ranks " << n << " list " << l << " of " << list.size());
      std::vector<trace::SeqItem> items = stored(list);
      RankRuns runs = RankRuns::of(items);
      REQUIRE(runs.expand() == std::vector<int64_t>(list.begin(), list.end()));
      REQUIRE(runs.size() == list.size());
      REQUIRE(runs.front() == list.front());
      REQUIRE(runs.back() == list.back());
      REQUIRE(runs.ascending());
      REQUIRE(stored(runs) == items);
      if (n >= 64 && l <= 3) REQUIRE(runs.runs().size() == 1);  // every, strided, even, odd: one run
      // Parts stored on their own, read back and joined (a tree step's members).
      for (int split = 0; split < 6; ++split) {
        RankRuns joined;
        for (size_t at = 0; at < list.size();) {
          size_t len = std::min(list.size() - at, size_t(1 + rng() % (split < 3 ? 4 : 700)));
          joined.append(RankRuns::of(stored(std::span<const int32_t>(list).subspan(at, len))));
          at += len;
        }
        REQUIRE(joined.ascending());
        REQUIRE(stored(joined) == items);
      }
    }
  }
}

TEST_CASE("rank runs tell a list that does not ascend", "[postproc][merge][ranks]") {
  RankRuns runs;
  runs.append(10, 2, 5);
  runs.append(20, 1, 1);
  REQUIRE(runs.ascending());
  REQUIRE(runs.runs().size() == 1);  // 20 continues 10, 12, .. 18
  runs.append(20, 1, 3);
  REQUIRE_FALSE(runs.ascending());
  REQUIRE(runs.expand() == std::vector<int64_t>{10, 12, 14, 16, 18, 20, 20, 21, 22});
  RankRuns down;
  down.append(9, -1, 3);
  REQUIRE_FALSE(down.ascending());
}
