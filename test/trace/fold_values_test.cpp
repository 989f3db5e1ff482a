#include "trace/fold_values.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "trace/fold_time.hpp"

using namespace mpior::trace;

namespace {

std::vector<int64_t> values_of(const ValueFolder& f) {
  SeqArena arena;
  SeqRef r = f.emit(arena);
  auto items = arena.view(r);
  REQUIRE(seq_valid(items));
  if (items.size() <= 1) return std::vector<int64_t>(f.length(), items.empty() ? 0 : items[0].v);
  return seq_expand(items);
}

std::vector<int64_t> random_values(std::mt19937_64& rng) {
  std::vector<int64_t> v;
  int n = int(rng() % 300);
  for (int i = 0; i < n; ++i) {
    switch (rng() % 5) {
      case 0:
        v.push_back(int64_t(rng() % 4));
        break;
      case 1:
      case 2:
        v.push_back(v.empty() ? 0 : v.back() + 4096);
        break;
      case 3:
        v.push_back(v.size() < 3 ? 7 : v[v.size() - 3]);
        break;  // period 3
      default:
        v.push_back(int64_t(rng()) >> 3);
        break;
    }
  }
  return v;
}

}  // namespace

TEST_CASE("a value folder gives back every value it was given", "[fold]") {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 300; ++trial) {
    auto v = random_values(rng);
    ValueFolder f;
    for (int64_t x : v) f.append(x);
    REQUIRE(f.length() == v.size());
    REQUIRE(values_of(f) == v);
  }
}

TEST_CASE("appending a folder appends its values in order", "[fold]") {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    auto a = random_values(rng), b = random_values(rng);
    if (trial % 4 == 0) b.assign(a.begin(), a.end());  // repeats fold
    ValueFolder fa, fb;
    for (int64_t x : a) fa.append(x);
    for (int64_t x : b) fb.append(x);
    fa.append_all(fb);
    auto want = a;
    want.insert(want.end(), b.begin(), b.end());
    REQUIRE(fa.length() == want.size());
    REQUIRE(values_of(fa) == want);
  }
}

TEST_CASE("runs cost nothing and repeated runs fold structurally", "[fold]") {
  ValueFolder f;
  for (int i = 0; i < 100000; ++i) f.append(7);
  REQUIRE(f.heap_bytes() == 0);
  SeqArena arena;
  REQUIRE(f.emit(arena).len == 1);  // a constant is one value
  ValueFolder zero;
  for (int i = 0; i < 10; ++i) zero.append(0);
  REQUIRE(zero.emit(arena).len == 0);  // "always zero" costs nothing

  ValueFolder rows, row;
  for (int j = 0; j < 64; ++j) row.append(j * 512);
  for (int i = 0; i < 1000; ++i) {
    ValueFolder shifted;
    for (int j = 0; j < 64; ++j) shifted.append(int64_t(i) * 100000 + j * 512);
    rows.append_all(shifted);
  }
  REQUIRE(rows.length() == 64000);
  SeqRef r = rows.emit(arena);
  REQUIRE(r.len <= 4);
  auto all = seq_expand(arena.view(r));
  REQUIRE(all[64 * 999 + 63] == 999 * 100000 + 63 * 512);
}

TEST_CASE("a copied folder is independent of the original", "[fold]") {
  ValueFolder a;
  for (int64_t x : {5, 1, 9, 2}) a.append(x);
  ValueFolder b = a;
  b.append(3);
  a.clear();
  a.append(4);
  REQUIRE(values_of(b) == std::vector<int64_t>{5, 1, 9, 2, 3});
  REQUIRE(values_of(a) == std::vector<int64_t>{4});
}

TEST_CASE("time accumulators agree with TimeStats, merged or not", "[fold]") {
  std::mt19937_64 rng(9);
  for (int trial = 0; trial < 50; ++trial) {
    TimeAccum a, b;
    TimeStats ref_a, ref_b;
    int n = 1 + int(rng() % 500), m = int(rng() % 500);
    int64_t base = int64_t(rng() % 1000000000);
    for (int i = 0; i < n + m; ++i) {
      int64_t v = base + int64_t(rng() % 5000) - (trial % 5 == 0 ? 2 * base : 0);
      (i < n ? a : b).add(v);
      (i < n ? ref_a : ref_b).add(v);
    }
    a.merge(b);
    ref_a.merge(ref_b);
    TimeStats got = a.stats();
    REQUIRE(got.count() == ref_a.count());
    REQUIRE(got.sum() == ref_a.sum());
    REQUIRE(got.min() == ref_a.min());
    REQUIRE(got.max() == ref_a.max());
    REQUIRE(got.mean() == Approx(ref_a.mean()).epsilon(1e-12));
    REQUIRE(got.variance() == Approx(ref_a.variance()).epsilon(1e-8).margin(1e-6));
    REQUIRE(got.histogram() == ref_a.histogram());
  }
}

TEST_CASE("times added in batches accumulate as one at a time, bit for bit", "[fold]") {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 100; ++trial) {
    TimeAccum one, many;
    std::vector<int64_t> v(1 + rng() % 700);
    const int64_t base = int64_t(rng() % 1000000), spread = int64_t(1 + rng() % (trial % 3 ? 100 : 100000));
    for (int64_t& x : v) x = base + int64_t(rng() % uint64_t(spread)) - (trial % 7 == 0 ? 2 * base : 0);
    for (int64_t x : v) one.add(x);
    for (size_t i = 0; i < v.size();) {
      const size_t n = std::min(v.size() - i, size_t(rng() % 70));
      many.add_many(v.data() + i, n);
      i += n;
    }
    const TimeStats a = one.stats(), b = many.stats();
    REQUIRE(b.count() == a.count());
    REQUIRE(b.sum() == a.sum());
    REQUIRE(b.min() == a.min());
    REQUIRE(b.max() == a.max());
    REQUIRE(b.mean() == a.mean());
    REQUIRE(b.variance() == a.variance());
    REQUIRE(b.histogram() == a.histogram());
  }
}

TEST_CASE("the inline time bins are TimeStats' bins", "[fold]") {
  std::mt19937_64 rng(11);
  for (int64_t v = -5; v < 5000; ++v) REQUIRE(time_bin(v) == TimeStats::bin_of(v));
  for (int i = 0; i < 100000; ++i) {
    int64_t v = int64_t(rng() >> (rng() % 64));
    REQUIRE(time_bin(v) == TimeStats::bin_of(v));
  }
  REQUIRE(time_bin(INT64_MAX) == TimeStats::bin_of(INT64_MAX));
}
