// Structure values that are a permutation of values a model fits once sorted
// (IOR -z: each rank's blocks in a seeded random order): extrapolated as a
// set, in a deterministic order, with a warning; --strict refuses.
#include "extrap/permuted.hpp"

#include <fcntl.h>

#include <algorithm>
#include <catch2/catch.hpp>

#include "extrap/extrapolate.hpp"
#include "postproc/analyze.hpp"
#include "postproc/behalf.hpp"
#include "postproc/plan.hpp"
#include "test/extrap/input_of.hpp"
#include "test/postproc/fixture.hpp"
#include "trace/cursor.hpp"

using namespace mpior;
using Catch::Matchers::Contains;

namespace {

constexpr int64_t kBlocks = 6, kBlock = 4096;

// Rank r's blocks of a shared file (r*kBlocks + k) in an order drawn from a
// seed of (r, n, pass): every rank and rank count shuffles differently.
std::vector<int64_t> shuffled_blocks(int32_t r, int32_t n, int pass) {
  std::vector<int64_t> v;
  for (int64_t k = 0; k < kBlocks; ++k) v.push_back((r * kBlocks + k) * kBlock);
  uint64_t s = uint64_t(r * 7919 + n * 104729 + pass * 13);
  for (size_t i = v.size(); i > 1; --i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    std::swap(v[i - 1], v[(s >> 33) % i]);
  }
  return v;
}

// Writes its blocks in one shuffled order (with `holes`, all but one that
// depends on r and n: no permutation of one modelled set), then reads them in
// another.
extrap::Input shuffled_run(int32_t n, bool holes = false) {
  std::vector<trace::RankTrace> ranks;
  for (int32_t r = 0; r < n; ++r) {
    test::RankBuilder b(r, n);
    int32_t f = b.file("/data/shared.dat", O_RDWR | O_CREAT);
    b.open(f, 10, O_RDWR | O_CREAT, 10);
    for (int64_t off : shuffled_blocks(r, n, 0))
      if (!holes || off != (r * kBlocks + (r + n) % kBlocks) * kBlock) b.pwrite(f, 10, off, kBlock, kBlock);
    for (int64_t off : shuffled_blocks(r, n, 1)) b.pread(f, 10, off, kBlock, kBlock);
    ranks.push_back(b.finish());
  }
  return test::input_of(std::move(ranks), "./shuffled", "t" + std::to_string(n));
}

std::vector<extrap::Input> shuffled_runs() { return {shuffled_run(3), shuffled_run(4), shuffled_run(5)}; }

// Rank r's offsets of kind k, in plan order.
std::vector<int64_t> offsets(const trace::Plan& p, int32_t rank, trace::Kind k) {
  std::vector<int64_t> out;
  for (const trace::Stream& s : p.streams) {
    if (!trace::seq_contains(s.view(s.ranks), rank)) continue;
    trace::EventCursor c(s, rank);
    trace::Event ev;
    while (c.next(ev))
      if (ev.kind == k) out.push_back(ev.args[trace::arg::offset]);
  }
  return out;
}

}  // namespace

TEST_CASE("shuffle_tail: a deterministic permutation seeded by rank, rank count and values") {
  std::vector<trace::SeqItem> sorted =
      extrap::sorted_seq(std::vector<trace::SeqItem>{{30, 0, 0}, {10, 0, 0}, {20, 0, 0}, {40, 0, 0}, {0, 0, 0}}, 5);
  CHECK(trace::seq_expand(sorted) == std::vector<int64_t>{5, 15, 25, 35, 45});
  CHECK(sorted.size() < 5);  // folded into a strided loop
  auto order = [&](int64_t r, int64_t n) {
    std::vector<trace::SeqItem> out{{99, 0, 0}};
    out.insert(out.end(), sorted.begin(), sorted.end());
    extrap::shuffle_tail(out, 1, r, n);
    CHECK(out.front().v == 99);  // what precedes base is kept
    return trace::seq_expand(out);
  };
  std::vector<int64_t> a = order(3, 8);
  CHECK(a == order(3, 8));
  std::vector<int64_t> s(a.begin() + 1, a.end());
  std::sort(s.begin(), s.end());
  CHECK(s == std::vector<int64_t>{5, 15, 25, 35, 45});
  bool differs = false;
  for (int64_t r = 0; r < 8; ++r) differs = differs || order(r, 8) != a;
  CHECK(differs);
}

TEST_CASE("offsets shuffled differently at every rank and rank count extrapolate as a set, with a warning") {
  std::vector<std::string> warnings;
  trace::Plan p = extrap::extrapolate(shuffled_runs(), 8, {}, &warnings);
  REQUIRE(p.ranks.size() == 8);
  for (int32_t r = 0; r < 8; ++r) {
    INFO("rank " << r);
    std::vector<int64_t> w = offsets(p, r, trace::Kind::pwrite), rd = offsets(p, r, trace::Kind::pread);
    CHECK(rd == w);  // the same set at one rank takes the same order
    std::sort(w.begin(), w.end());
    std::vector<int64_t> want;
    for (int64_t k = 0; k < kBlocks; ++k) want.push_back((r * kBlocks + k) * kBlock);
    CHECK(w == want);
  }
  std::string all;
  for (const std::string& w : warnings) all += w + "\n";
  CHECK_THAT(all, Contains("order approximated: a permutation of"));
  bool marked = false;
  for (const trace::ExtrapNote& n : p.extrap.notes) marked = marked || n.name == trace::kApproximateModel;
  CHECK(marked);
  // The same inputs give the same plan's order.
  CHECK(offsets(extrap::extrapolate(shuffled_runs(), 8), 5, trace::Kind::pwrite) == offsets(p, 5, trace::Kind::pwrite));
}

TEST_CASE("--strict refuses shuffled offsets as before") {
  extrap::Options strict;
  strict.strict = true;
  REQUIRE_THROWS_WITH(extrap::extrapolate(shuffled_runs(), 8, strict),
                      Contains("off: the values do not have one loop shape"));
}

TEST_CASE("values that are no permutation of a modelled set are refused, saying so") {
  REQUIRE_THROWS_WITH(extrap::extrapolate({shuffled_run(3, true), shuffled_run(4, true), shuffled_run(5, true)}, 8),
                      Contains("off: the values do not have one loop shape") &&
                          Contains("Nor are they a permutation of values that fit") && Contains("sorted, "));
}
