#include "trace/value_seq.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>

using namespace mpior::trace;

namespace {

std::vector<SeqItem> build(const std::vector<int64_t>& values, unsigned window = 4) {
  SeqBuilder b(window);
  for (int64_t v : values) b.append(v);
  return b.items();
}

}  // namespace

TEST_CASE("a constant run folds into one loop", "[value_seq]") {
  auto items = build(std::vector<int64_t>(1000, 7));
  REQUIRE(items.size() == 2);
  REQUIRE(seq_expand(items) == std::vector<int64_t>(1000, 7));
}

TEST_CASE("a strided run folds into one loop", "[value_seq]") {
  std::vector<int64_t> v;
  for (int i = 0; i < 500; ++i) v.push_back(4096 * i + 17);
  auto items = build(v);
  REQUIRE(items.size() == 2);
  REQUIRE(seq_expand(items) == v);
  REQUIRE(seq_length(items) == 500);
}

TEST_CASE("nested strides fold into nested loops", "[value_seq]") {
  std::vector<int64_t> v;
  for (int i = 0; i < 50; ++i)
    for (int j = 0; j < 8; ++j) v.push_back(100000 * i + 512 * j);
  auto items = build(v);
  REQUIRE(items.size() <= 4);
  REQUIRE(seq_expand(items) == v);
}

TEST_CASE("a repeating pattern of unequal values folds by its period", "[value_seq]") {
  std::vector<int64_t> v;
  for (int i = 0; i < 300; ++i) {
    v.push_back(16);
    v.push_back(4096);
    v.push_back(4096);
  }
  auto items = build(v);
  REQUIRE(items.size() <= 6);
  REQUIRE(seq_expand(items) == v);
}

TEST_CASE("random values round-trip exactly", "[value_seq]") {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<int64_t> v;
    int n = int(rng() % 200);
    for (int i = 0; i < n; ++i) {
      switch (rng() % 3) {
        case 0:
          v.push_back(int64_t(rng() % 5));
          break;
        case 1:
          v.push_back(v.empty() ? 0 : v.back() + 3);
          break;
        default:
          v.push_back(int64_t(rng()) >> 1);
          break;
      }
    }
    auto items = build(v);
    REQUIRE(seq_valid(items));
    REQUIRE(seq_expand(items) == v);
  }
}

TEST_CASE("the cursor yields zeros for an empty sequence", "[value_seq]") {
  SeqCursor c;
  REQUIRE(c.next() == 0);
  REQUIRE(seq_length({}) == 0);
}

TEST_CASE("membership is answered for every shape of sequence", "[value_seq]") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<int64_t> v;
    int64_t base = int64_t(rng() % 50) - 25;
    int n = 1 + int(rng() % 6), m = 1 + int(rng() % 5), stride = int(rng() % 7) - 3;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < m; ++j) v.push_back(base + 100 * i + stride * j);
    if (trial % 3 == 0) v.push_back(int64_t(rng() % 1000));
    auto items = build(v);
    for (int64_t x = -150; x < 700; ++x)
      REQUIRE(seq_contains(items, x) == (std::find(v.begin(), v.end(), x) != v.end()));
  }
  auto ranks = build([] {
    std::vector<int64_t> r;
    for (int i = 0; i < 8192; ++i) r.push_back(i);
    return r;
  }());
  REQUIRE(seq_contains(ranks, 8191));
  REQUIRE_FALSE(seq_contains(ranks, 8192));
  REQUIRE_FALSE(seq_contains(ranks, -1));
}

// The builder rules out folds of a tail of scalars with one test per length
// (SeqBuilder::scalar_fold_possible): patterns that begin after a long run of
// values that never fold must still fold, at every length the window has.
TEST_CASE("patterns after a long run of random values still fold", "[value_seq]") {
  std::mt19937_64 rng(7);
  for (int L = 1; L <= 8; ++L) {
    std::vector<int64_t> v;
    for (int i = 0; i < 100; ++i) v.push_back(int64_t(rng() % 1000000) * 64);
    std::vector<int64_t> pattern;
    for (int i = 0; i < L; ++i) pattern.push_back(int64_t(rng() % 1000000) * 64 + 1);
    for (int rep = 0; rep < 50; ++rep)
      for (int64_t p : pattern) v.push_back(p + rep * 4096);  // shifted by 4096 per repetition
    auto items = build(v, 8);
    REQUIRE(seq_expand(items) == v);
    // The random values stay scalars; the pattern becomes one loop of its body
    // (a body of one value: a strided run).
    CAPTURE(L);
    REQUIRE(items.size() <= 100 + 1 + size_t(L) + 1);
  }
  std::vector<int64_t> v;  // then an equal pair, a strided run, a repeat of a loop
  for (int i = 0; i < 64; ++i) v.push_back(int64_t(rng()) >> 4);
  v.insert(v.end(), {5, 5, 10, 20, 30, 40});
  for (int rep = 0; rep < 3; ++rep)
    for (int i = 0; i < 20; ++i) v.push_back(1000 * rep + i);
  auto items = build(v, 8);
  REQUIRE(seq_expand(items) == v);
  REQUIRE(items.size() <= 64 + 8);
}

// append_stride skips the values that only count into the last loop: the
// items must be append()'s one value at a time, also where a loop's count
// reaches the count of an earlier loop it then folds with (runs of equal
// length, nested and repeating), at every window.
TEST_CASE("a run appended at once folds as its values one at a time", "[value_seq]") {
  std::mt19937_64 rng(19);
  for (int trial = 0; trial < 400; ++trial) {
    unsigned window = 1 + unsigned(trial % 8);
    SeqBuilder fast(window), slow(window);
    std::vector<int64_t> values;
    int64_t next = int64_t(rng() % 50);
    for (int run = 0; run < 40; ++run) {
      // Mostly unit or 16-strided runs of a few lengths (so counts repeat),
      // sometimes a gap, a zero stride or a random value.
      static constexpr int64_t kStrides[] = {1, 1, 16, 2, 0, -3};
      int64_t stride = kStrides[rng() % 6];
      uint64_t n = rng() % 4 == 0 ? rng() % 3 : std::vector<uint64_t>{3, 4, 5, 8, 100}[rng() % 5];
      if (rng() % 3 == 0) next += int64_t(rng() % 40);
      if (rng() % 10 == 0) next = int64_t(rng() >> 8);
      fast.append_stride(next, stride, n);
      for (uint64_t i = 0; i < n; ++i) {
        slow.append(next);
        values.push_back(next);
        next += stride;
      }
      if (rng() % 2 == 0) next += stride;  // the next run continues this one, or shifts
      INFO("trial " << trial << " window " << window << " run " << run);
      REQUIRE(fast.items() == slow.items());
      REQUIRE(fast.length() == slow.length());
    }
    REQUIRE(seq_expand(fast.items()) == values);
  }
  // Blocks of equal runs: each block's loop count meets the one before.
  for (unsigned window : {1u, 4u, 8u}) {
    SeqBuilder fast(window), slow(window);
    for (int64_t block = 0; block < 6; ++block)
      for (int64_t r = 0; r < 5; ++r) {
        uint64_t n = block % 2 ? 7 : 1000;
        fast.append_stride(block * 100000 + r * 2000, 1, n);
        for (uint64_t i = 0; i < n; ++i) slow.append(block * 100000 + r * 2000 + int64_t(i));
        REQUIRE(fast.items() == slow.items());
      }
  }
}
