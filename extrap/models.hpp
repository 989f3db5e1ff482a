// The extrapolation models (scalaioextrap §II and §III-B): every quantity of a
// plan that changes with the rank count n is a function of the rank r and n.
//
// Structure-bearing quantities (counts, sizes, offsets, peers, roots, file
// name numbers, trip counts) are integers and need an exact fit: a model is
// linear in its coefficients over a few basis functions of (r, n) (constant,
// linear in n, inverse a/n, inverse plus constant, quadratic, rank-linear,
// strong-scaling r/n, the paper's model 5 ((r + a) mod n)·b, groups r / k and
// r mod k, the share of a fixed total k dealt over n ranks, a neighbour on a
// Cartesian grid), solved by least squares and kept only when it reproduces
// every sample exactly. Timing takes the best fit over n by residual (ScalaExtrap).
//
// The registry is the one list `exact_models()`: a new model is one entry
// there (and one test).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mpior::extrap {

// One basis function of (r, n); `k` is the parameter of the parametrised ones.
enum class Basis : uint8_t {
  one,        // 1
  n,          // n
  n2,         // n^2
  inv_n,      // 1 / n
  r,          // r
  r_over_n,   // r / n
  r_times_n,  // r * n
  mod_shift,  // (r + k) mod n, non-negative (model 5)
  div_k,      // floor(r / k)
  mod_k,      // r mod k
  share,      // rank r's share of k things dealt over n ranks: floor(k/n) + (r < k mod n)
  grid,       // r's neighbour along a dimension of a Cartesian grid, shift k (grid_shift.hpp)
};

// Rank r's share of k things dealt over n ranks, round robin or in
// contiguous blocks (the first k mod n ranks take one more): HDF5 deals a
// fixed number of metadata cache entries so at file close.
int64_t share_of(int64_t k, int64_t r, int64_t n);

struct Term {
  Basis basis = Basis::one;
  int64_t k = 0;
  bool operator==(const Term&) const = default;
};

// A model: its name and terms; parametrised terms are searched over k.
struct ModelSpec {
  const char* name;
  std::vector<Basis> terms;
};

// The registry of exact models, simplest first.
const std::vector<ModelSpec>& exact_models();

// An observed value of a quantity: rank r of a run with n ranks gave y.
struct Sample {
  int64_t r = 0;
  int64_t n = 0;
  int64_t y = 0;
};

// The totals k for which the samples are c + share(k, r, n) for one c, when
// they vary with n (none: they do not, or follow no such deal), smallest first.
std::vector<int64_t> share_totals(std::span<const Sample> samples);

// A model with its coefficients.
struct Fit {
  const char* name = "";
  std::vector<Term> terms;
  std::vector<long double> coef;
  bool determined = false;  // as many points as coefficients: fits by construction, nothing checked it
  // "per rank": a value of each rank's own that no rank count changes (an
  // entry of a table the first ranks each write), for ranks seen only.
  std::vector<std::pair<int64_t, int64_t>> per_rank = {};

  long double eval(int64_t r, int64_t n) const;
  // Exact integer value at (r, n), or nullopt when the model gives a
  // non-integral value (or one that does not fit in 64 bits).
  std::optional<int64_t> eval_int(int64_t r, int64_t n) const;
  // "960*r/n", "(r+1) mod n", "4096"
  std::string formula() const;
  // True when the value does not depend on r.
  bool rank_free() const;
  // The ranks in (0, n) where the value, linear in r between them at n
  // ranks, takes a new line: a rank shift's wrap, a group's start, the end
  // of the ranks with one more of a share (ascending, maybe repeated).
  std::vector<int64_t> breaks(int64_t n) const;
};

// The simplest exact model for the samples, or nullopt. After the formulas,
// "per rank" when every rank seen at two rank counts or more kept its value
// at each (its value at another rank is unknown: eval gives NaN). A model needs more
// distinct (r, n) points than coefficients, so that a point checks it, and
// samples from two rank counts or more, unless every sample has the same
// value (then: the constant). When none is checked that way, the simplest
// model with as many points as coefficients is returned with `determined`
// set (a stream only some rank counts show, like the last rank at even n).
std::optional<Fit> fit_exact(std::span<const Sample> samples);

// Free parameters of a fit: its coefficients and its searched parameter (a
// rank shift, a group size, a total), which the samples choose too.
size_t free_parameters(const Fit& fit);

// The checked exact fits of the samples other than `fit` (each value of a
// searched parameter that fits counts) with no more free parameters than
// `fit`: the models the samples leave as likely. None for a determined or
// per-rank fit.
std::vector<Fit> exact_rivals(std::span<const Sample> samples, const Fit& fit);

// Incidental quantities (stdio byte counts, reads of system files): the
// registry's best fit by least squares when none is exact, for values that
// are not structure and may differ between runs at one rank count. Samples
// of one (r, n) are averaged; the parametrised models are left out (noise
// would pick a k), and a model with more coefficients must halve the
// relative error of a simpler one. Evaluate with `approximate`.
Fit fit_best(std::span<const Sample> samples);
// The best fit's value at (r, n): rounded, never below `floor` (0, or the
// smallest value seen when that was negative: -1 for "unknown").
int64_t approximate(const Fit& fit, int64_t r, int64_t n, int64_t floor);

// Timing: ScalaExtrap's four models over n alone (constant, linear, inverse,
// inverse + constant; no quadratic, which noise would blow up at 8,192
// ranks), best by standard error of the fit relative to the mean; a model
// with more coefficients must do clearly better; never negative.
struct TimingFit {
  Fit fit;
  double predict(int64_t n) const;
};
TimingFit fit_timing(std::span<const std::pair<int64_t, double>> points);

}  // namespace mpior::extrap
