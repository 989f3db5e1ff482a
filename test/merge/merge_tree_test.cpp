// The tree reduction (merge_tree.hpp): whatever the radix and rank count,
// every rank reads back its own events from the root's streams, and an SPMD
// job reduces to the streams the flat merge makes.
#include "merge/merge_tree.hpp"

#include <fcntl.h>

#include <catch2/catch.hpp>

#include "merge/merge.hpp"
#include "merge/merge_params.hpp"
#include "postproc/merge_check.hpp"
#include "test/postproc/fixture.hpp"
#include "test/postproc/spmd_rank.hpp"

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
          merge::TreeStats stats;
          std::vector<trace::Stream> root = merge::reduce_tree(
              size_t(size), [&](size_t i) { return ranks[i].streams; }, radix, &stats);
          check_every_rank(ranks, root);
          std::vector<trace::Stream> flat;
          for (const trace::RankTrace& t : ranks) flat.insert(flat.end(), t.streams.begin(), t.streams.end());
          flat = merge::merge_streams(std::move(flat));
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
  std::vector<trace::Stream> root = merge::reduce_tree(
      kRanks, [&](size_t i) { return ranks[i].streams; }, 4);
  std::vector<trace::Stream> flat;
  for (const trace::RankTrace& t : ranks) flat.insert(flat.end(), t.streams.begin(), t.streams.end());
  flat = merge::merge_streams(std::move(flat));
  REQUIRE(root.size() == 1);
  REQUIRE(flat.size() == 1);
  REQUIRE(root[0].ranked.size() == flat[0].ranked.size());
  REQUIRE(root[0].values.items().size() <= flat[0].values.items().size() + 8);
}

namespace {

// Rank r's values vary as rank lists the merge must keep: affine offsets,
// even/odd counts, 16 strided variants, an irregular set of ranks; another
// irregular set makes one more call (a stream of its own structure).
trace::RankTrace varied_rank(int32_t r, int32_t size) {
  constexpr int64_t kBlock = 4096;
  auto irregular = [](int32_t x, uint32_t salt) { return ((uint32_t(x) * 2654435761u) >> salt) % 3 == 0; };
  RankBuilder b(r, size);
  int32_t f = b.file("/scratch/shared");
  b.open(f, 3, O_CREAT | O_WRONLY, 3);
  for (int64_t i = 0; i < 3; ++i) {
    b.pwrite(f, 3, (i * size + r) * kBlock, kBlock, kBlock);
    b.pwrite(f, 3, i * kBlock, r % 2 ? 512 : 1024, r % 2 ? 512 : 1024);
    b.pwrite(f, 3, 0, 4096 * (r % 16 + 1), 4096 * (r % 16 + 1));
    b.pread(f, 3, 0, irregular(r, 7) ? 7 : 8, irregular(r, 7) ? 7 : 8);
    b.collective(Kind::MPI_Barrier, 0);
  }
  if (irregular(r, 11)) b.pread(f, 3, 0, 1, 1);
  return b.finish();
}

// A stored list is add_rank_list's for its ranks, ascending.
void require_canonical(const trace::Stream& s, trace::SeqRef list) {
  std::vector<int32_t> ranks;
  for (int64_t r : trace::seq_expand(s.view(list))) ranks.push_back(int32_t(r));
  REQUIRE(std::adjacent_find(ranks.begin(), ranks.end(), std::greater_equal<>()) == ranks.end());
  trace::SeqArena arena;
  std::span<const trace::SeqItem> expected = arena.view(merge::add_rank_list(arena, ranks));
  std::span<const trace::SeqItem> got = s.view(list);
  REQUIRE(std::equal(got.begin(), got.end(), expected.begin(), expected.end()));
}

}  // namespace

// The rank lists a step joins stay runs above expand_ranks (issue 19): what
// each step stores must be what expanding and storing the ranks gives.
TEST_CASE("tree steps store rank lists as expanding them would", "[postproc][merge][tree][ranks]") {
  for (int32_t size : {48, 4096})
    for (size_t expand : {size_t(1), size_t(16), size_t(256)}) {
      INFO("ranks " << size << " expand " << expand);
      std::vector<trace::RankTrace> ranks;
      std::vector<std::vector<trace::Stream>> level;
      for (int32_t r = 0; r < size; ++r) {
        ranks.push_back(varied_rank(r, size));
        level.push_back(ranks.back().streams);
      }
      while (level.size() > 1) {
        std::vector<std::vector<trace::Stream>> next;
        for (size_t i = 0; i < level.size(); i += 2) {
          std::vector<trace::Stream> all = std::move(level[i]);
          if (i + 1 < level.size()) std::move(level[i + 1].begin(), level[i + 1].end(), std::back_inserter(all));
          next.push_back(merge::merge_merged(std::move(all), expand));
          for (const trace::Stream& s : next.back()) {
            require_canonical(s, s.ranks);
            for (const auto& variants : s.ranked)
              for (const trace::RankVariant& v : variants) require_canonical(s, v.ranks);
          }
        }
        level = std::move(next);
      }
      REQUIRE(level[0].size() == 2);  // the two structures
      check_every_rank(ranks, level[0]);
    }
}
