// The exact models: each found from its own samples, near-fits refused,
// model 5 with its wrap-around, values that are not integers at the target.
#include "extrap/models.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>

using namespace mpior::extrap;

namespace {

// Samples of f at every rank of each n.
std::vector<Sample> samples(std::initializer_list<int64_t> ns, const std::function<int64_t(int64_t, int64_t)>& f) {
  std::vector<Sample> out;
  for (int64_t n : ns)
    for (int64_t r = 0; r < n; ++r) out.push_back({r, n, f(r, n)});
  return out;
}

Fit must_fit(const std::vector<Sample>& s) {
  std::optional<Fit> f = fit_exact(s);
  REQUIRE(f);
  return *f;
}

}  // namespace

TEST_CASE("every model of the registry is found from its own samples") {
  struct Case {
    const char* model;
    std::function<int64_t(int64_t, int64_t)> f;
    int64_t r, n, want;
  };
  std::vector<Case> cases = {
      {"constant", [](int64_t, int64_t) { return 4096; }, 5, 64, 4096},
      {"linear in n", [](int64_t, int64_t n) { return 4096 * n + 16; }, 5, 64, 4096 * 64 + 16},
      {"inverse", [](int64_t, int64_t n) { return 53760 / n; }, 5, 64, 840},
      {"inverse + constant", [](int64_t, int64_t n) { return 53760 / n + 7; }, 5, 64, 847},
      {"rank-linear", [](int64_t r, int64_t) { return 27 + 2 * r; }, 5, 64, 37},
      {"strong scaling", [](int64_t r, int64_t n) { return r * (53760 / n); }, 5, 64, 5 * 840},
      {"rank-modulo (model 5)", [](int64_t r, int64_t n) { return (r + 1) % n; }, 63, 64, 0},
      {"group of k", [](int64_t r, int64_t) { return r / 4; }, 13, 64, 3},
      {"member of k", [](int64_t r, int64_t) { return r % 3; }, 13, 64, 1},
      {"share of a fixed total", [](int64_t r, int64_t n) { return 5 * share_of(8, r, n); }, 7, 16, 5},
      {"share of a fixed total + constant", [](int64_t r, int64_t n) { return 8 + share_of(8, r, n); }, 8, 16, 8},
      {"rank-linear + n", [](int64_t r, int64_t n) { return r + 100 * n; }, 5, 64, 6405},
      {"quadratic", [](int64_t, int64_t n) { return n * n + 1; }, 0, 64, 4097},
  };
  for (const Case& c : cases) {
    INFO(c.model);
    Fit f = must_fit(samples({3, 4, 5, 6}, c.f));
    CHECK(std::string(f.name) == c.model);
    CHECK(f.eval_int(c.r, c.n) == c.want);
    CHECK_FALSE(f.determined);
  }
}

TEST_CASE("model 5 wraps the last rank around to the first") {
  Fit right = must_fit(samples({4, 5, 6, 7}, [](int64_t r, int64_t n) { return (r + 1) % n; }));
  Fit left = must_fit(samples({4, 5, 6, 7}, [](int64_t r, int64_t n) { return (r + n - 1) % n; }));
  for (int64_t r = 0; r < 8192; ++r) {
    REQUIRE(right.eval_int(r, 8192) == (r + 1) % 8192);
    REQUIRE(left.eval_int(r, 8192) == (r + 8191) % 8192);
  }
  CHECK(right.formula() == "((r+1) mod n)");
  // Scaled: a block offset of the next rank.
  Fit scaled = must_fit(samples({4, 5, 6}, [](int64_t r, int64_t n) { return ((r + 2) % n) * 4096; }));
  CHECK(scaled.eval_int(8191, 8192) == 4096);
}

// hdf5_steps' chunk offsets at 5 and 6 ranks (the ranks writing one metadata
// entry: 3, 4 and 2 to 5): 4664+2048*(r+n), which 16952+2048*((r-6) mod n)
// also fits, every sample wrapping once; at 8 ranks rank 6 tells them apart.
TEST_CASE("model 5 is not taken where every sample wraps alike") {
  std::vector<Sample> pts;
  for (auto [r, n] : {std::pair{3, 5}, {4, 5}, {2, 6}, {3, 6}, {4, 6}, {5, 6}})
    pts.push_back({r, n, 4664 + 2048 * (r + n)});
  Fit f = must_fit(pts);
  CHECK(std::string(f.name) == "rank-linear + n");
  CHECK(f.eval_int(6, 8) == 4664 + 2048 * 14);
}

TEST_CASE("near fits are refused, not rounded") {
  // n*n + 1 except one run off by one: no model reproduces every sample.
  std::vector<Sample> s = samples({3, 4, 5, 6}, [](int64_t, int64_t n) { return n * n * n; });
  CHECK_FALSE(fit_exact(s));
  s = samples({4, 5, 6, 7}, [](int64_t r, int64_t) { return r * r + 1; });
  CHECK_FALSE(fit_exact(s));
  s = samples({4, 5, 6, 7}, [](int64_t r, int64_t n) { return 4096 * r + n; });
  s.back().y += 1;
  CHECK_FALSE(fit_exact(s));
  // One sample per point with two values at one point.
  CHECK_FALSE(fit_exact(std::vector<Sample>{{0, 4, 1}, {0, 4, 2}, {0, 5, 3}}));
}

TEST_CASE("a value of each rank's own, the same at every rank count, is kept per rank") {
  // HDF5's metadata entries: ranks 1 to 5 each write one, at its own offset.
  const int64_t offsets[] = {0, 96, 136, 680, 800, 1072};
  std::vector<Sample> s;
  for (int64_t n : {6, 7, 8, 9})
    for (int64_t r = 1; r < 6; ++r) s.push_back({r, n, offsets[r]});
  Fit f = must_fit(s);
  CHECK(f.name == std::string("per rank"));
  CHECK_FALSE(f.rank_free());
  for (int64_t r = 1; r < 6; ++r) CHECK(f.eval_int(r, 8192) == offsets[r]);
  CHECK_FALSE(f.eval_int(6, 8192));  // never seen: no value
  // A rank seen at one rank count only says nothing of the next.
  s.push_back({6, 9, 2000});
  CHECK_FALSE(fit_exact(s));
  // Nor does a rank whose value changed with n.
  s.pop_back();
  s.back().y += 8;
  CHECK_FALSE(fit_exact(s));
}

// HDF5 deals the E metadata entries it flushes at file close over the ranks:
// each writes floor(E/n), the first E mod n one more (IOR's independent
// shared-file pattern: rank 0's write loop holds its data blocks and its
// share, 11, 10, 10, 10 times at 3 to 6 ranks).
TEST_CASE("a rank's share of a fixed total dealt over the ranks") {
  CHECK(share_of(8, 0, 3) == 3);
  CHECK(share_of(8, 2, 3) == 2);
  CHECK(share_of(8, 7, 8) == 1);
  CHECK(share_of(8, 8, 16) == 0);
  CHECK(share_of(8, 3, 2) == 0);  // not a rank of the run
  // Ranks 0 and 1 tell the total apart; rank 0 alone does not (8 + share(8)
  // and 9 + share(4) both give it 11, 10, 10, 10 and part at 8 ranks).
  std::vector<Sample> rank0 = {{0, 3, 11}, {0, 4, 10}, {0, 5, 10}, {0, 6, 10}};
  // Nor does anything else: 11 - ((r+3) mod n)/3 fits too, its coefficient a fraction.
  CHECK_FALSE(fit_exact(rank0));
  CHECK(share_totals(rank0) == std::vector<int64_t>{4, 7, 8});
  CHECK(share_totals(std::vector<Sample>{{0, 3, 2}, {0, 4, 2}}).empty());  // not varying with n
  CHECK(share_totals(std::vector<Sample>{{0, 3, 1}, {0, 4, 2}}).empty());  // a share never grows with n
  std::vector<Sample> two = rank0;
  for (int64_t n : {3, 4, 5, 6}) two.push_back({1, n, 8 + share_of(8, 1, n)});
  Fit f = must_fit(two);
  CHECK(std::string(f.name) == "share of a fixed total + constant");
  CHECK(f.formula() == "8+share(8,r,n)");
  CHECK(f.eval_int(0, 8) == 9);
  CHECK(f.eval_int(0, 16) == 9);
  CHECK_FALSE(f.rank_free());
  // Every rank of 3 to 6: the total is found, and the ranks past it at 16 get none.
  Fit all = must_fit(samples({3, 4, 5, 6}, [](int64_t r, int64_t n) { return share_of(8, r, n); }));
  for (int64_t r = 0; r < 16; ++r) CHECK(all.eval_int(r, 16) == (r < 8 ? 1 : 0));
  // One rank off the deal is no share.
  std::vector<Sample> off = samples({3, 4, 5, 6}, [](int64_t r, int64_t n) { return share_of(8, r, n); });
  off[4].y += 1;
  std::optional<Fit> near = fit_exact(off);
  CHECK((!near || std::string(near->name).find("share") == std::string::npos));
}

TEST_CASE("values that are not integers at the target are reported") {
  Fit f = must_fit(samples({4, 5, 6, 7}, [](int64_t, int64_t n) { return 53760 / n; }));
  CHECK(f.eval_int(0, 8) == 6720);
  CHECK_FALSE(f.eval_int(0, 9));
  CHECK_FALSE(f.eval_int(0, 8192));
}

TEST_CASE("a quantity seen at one rank count only is not extrapolated, two runs determine a model") {
  CHECK_FALSE(fit_exact(std::vector<Sample>{{0, 4, 7}, {1, 4, 9}}));  // one n: nothing about n
  CHECK(fit_exact(std::vector<Sample>{{0, 4, 7}, {0, 6, 7}})->name == std::string("constant"));
  std::optional<Fit> two = fit_exact(std::vector<Sample>{{3, 4, 33}, {5, 6, 37}});
  REQUIRE(two);
  CHECK(two->determined);
  CHECK(two->eval_int(7, 8) == 41);
}

TEST_CASE("timing takes the best fit and never goes negative") {
  std::vector<std::pair<int64_t, double>> inverse = {{4, 250.5}, {5, 200.2}, {6, 166.9}, {7, 143.1}};
  TimingFit f = fit_timing(inverse);
  CHECK(std::string(f.fit.name).find("inverse") == 0);
  CHECK(f.predict(8) == Approx(125).margin(3));
  std::vector<std::pair<int64_t, double>> flat = {{4, 100}, {5, 101}, {6, 99}, {7, 100}};
  CHECK(std::string(fit_timing(flat).fit.name) == "constant");
  // A fall that a line or a + b/n would carry below zero: a model that stays
  // positive, never a call that takes no time.
  std::vector<std::pair<int64_t, double>> falling = {{4, 40}, {5, 30}, {6, 20}, {7, 10}};
  TimingFit fall = fit_timing(falling);
  CHECK(fall.predict(64) > 0);
  CHECK(fall.predict(1 << 20) > 0);
  CHECK(fall.predict(64) < 10);
  // A noisy fsync at 2, 3 and 4 ranks: a + b/n fits it best with a < 0.
  std::vector<std::pair<int64_t, double>> noisy = {{2, 4.78e6}, {3, 2.9e6}, {4, 0.544e6 + 1.1e6}};
  CHECK(fit_timing(noisy).predict(6) > 0);
  CHECK(fit_timing(noisy).predict(8192) > 0);
}

TEST_CASE("best fit: the simplest model unless a richer one halves the error; rounded, never negative") {
  // Noise around 30: the constant.
  std::vector<Sample> noisy = {{0, 4, 35}, {0, 8, 28}, {0, 12, 31}, {0, 16, 28}};
  Fit f = fit_best(noisy);
  CHECK(std::string(f.name) == "constant");
  CHECK(approximate(f, 0, 8192, 0) == 31);
  // Lines growing with n, one byte off: linear in n wins.
  std::vector<Sample> growing = {{0, 4, 20}, {0, 8, 41}, {0, 12, 60}, {0, 16, 80}};
  Fit g = fit_best(growing);
  CHECK(std::string(g.name) == "linear in n");
  CHECK(std::abs(approximate(g, 0, 32, 0) - 160) <= 2);
  // Falling below zero is clamped to the floor.
  std::vector<Sample> falling = {{0, 4, 40}, {0, 8, 30}, {0, 12, 21}, {0, 16, 10}};
  CHECK(approximate(fit_best(falling), 0, 100, 0) == 0);
  CHECK(approximate(fit_best(falling), 0, 100, -1) == -1);
}

TEST_CASE("the parameter search's quick test in integers turns away no model that fits") {
  // Large constants, negative coefficients, term values equal at the first
  // points (the constant decided by later ones): each still found, with its k.
  struct Case {
    const char* model;
    std::function<int64_t(int64_t, int64_t)> f;
    const char* formula;
  };
  const int64_t big = int64_t(1) << 20;  // 1e-9 of it is under one: still exact
  std::vector<Case> cases = {
      {"share of a fixed total", [](int64_t r, int64_t n) { return -3 * share_of(13, r, n); }, "-3*share(13,r,n)"},
      {"share of a fixed total + constant", [&](int64_t r, int64_t n) { return big - 7 * share_of(9, r, n); },
       "1048576-7*share(9,r,n)"},
      {"rank-modulo + constant", [](int64_t r, int64_t n) { return 5 - 2 * ((r + 2) % n); }, "5-2*((r+2) mod n)"},
      {"group of k", [&](int64_t r, int64_t) { return big + 4096 * (r / 2); }, "1048576+4096*(r/2)"},
      {"member of k", [](int64_t r, int64_t) { return 1 - 3 * (r % 4); }, "1-3*(r mod 4)"},
  };
  for (const Case& c : cases) {
    INFO(c.model);
    Fit f = must_fit(samples({5, 6, 7, 9}, c.f));
    CHECK(std::string(f.name) == c.model);
    CHECK(f.formula() == c.formula);
    for (int64_t r : {0, 7, 31}) CHECK(f.eval_int(r, 32) == c.f(r, 32));
  }
}

TEST_CASE("a model is linear in r between its breaks") {
  Fit shift = must_fit(samples({4, 5, 6, 7}, [](int64_t r, int64_t n) { return ((r + 2) % n) * 8 + 1; }));
  CHECK(shift.breaks(16) == std::vector<int64_t>{14});
  Fit member = must_fit(samples({3, 4, 5, 6}, [](int64_t r, int64_t) { return 1 + r % 3; }));
  CHECK(member.breaks(10) == std::vector<int64_t>{3, 6, 9});
  Fit share = must_fit(samples({3, 4, 5, 6}, [](int64_t r, int64_t n) { return 5 * share_of(8, r, n); }));
  CHECK(share.breaks(6) == std::vector<int64_t>{2});
  CHECK(must_fit(samples({3, 4, 5}, [](int64_t r, int64_t n) { return r + n; })).breaks(64).empty());
}

// Rank r's neighbour along one dimension of a periodic row-major grid whose
// dimension has stride b and size d.
int64_t cart_neighbour(int64_t r, int64_t b, int64_t d, int64_t step) {
  int64_t coord = r / b % d;
  return r + (((coord + step) % d + d) % d - coord) * b;
}

TEST_CASE("a neighbour on a 2 x 2 x n/4 grid, along each dimension, at a count never traced") {
  struct Case {
    const char* dim;
    std::function<int64_t(int64_t, int64_t)> f;
  };
  std::vector<Case> cases = {
      {"z up", [](int64_t r, int64_t n) { return cart_neighbour(r, 1, n / 4, 1); }},
      {"z down", [](int64_t r, int64_t n) { return cart_neighbour(r, 1, n / 4, -1); }},
      {"y", [](int64_t r, int64_t n) { return cart_neighbour(r, n / 4, 2, 1); }},
      {"x", [](int64_t r, int64_t n) { return cart_neighbour(r, n / 2, 2, 1); }},
  };
  for (const Case& c : cases) {
    INFO(c.dim);
    Fit f = must_fit(samples({12, 16, 20}, c.f));
    for (int64_t n : {32, 8192})
      for (int64_t r : {int64_t(0), int64_t(1), n / 4 - 1, n / 4, n / 2 + 3, n - 1})
        CHECK(f.eval_int(r, n) == c.f(r, n));
  }
}
