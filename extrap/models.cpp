#include "extrap/models.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string_view>
#include <tuple>
#include <utility>

#include "extrap/grid_shift.hpp"

namespace mpior::extrap {

namespace {

// Largest k tried for the parametrised terms (group sizes, rank shifts).
constexpr int64_t kMaxGroup = 64;
// Relative tolerance of "exact": the solve is in long double, values are integers.
constexpr long double kExact = 1e-9L;

long double value_of(const Term& t, int64_t r, int64_t n) {
  long double R = r, N = n;
  switch (t.basis) {
    case Basis::one:
      return 1;
    case Basis::n:
      return N;
    case Basis::n2:
      return N * N;
    case Basis::inv_n:
      return 1 / N;
    case Basis::r:
      return R;
    case Basis::r_over_n:
      return R / N;
    case Basis::r_times_n:
      return R * N;
    case Basis::mod_shift:
      return n > 0 ? (((r + t.k) % n) + n) % n : 0;
    case Basis::div_k:
      return t.k > 0 ? std::floor(R / t.k) : 0;
    case Basis::mod_k:
      return t.k > 0 ? ((r % t.k) + t.k) % t.k : 0;
    case Basis::share:
      return static_cast<long double>(share_of(t.k, r, n));
    case Basis::grid:
      // Where the grid does not divide n, a value no sample has.
      return n > 0 ? static_cast<long double>(grid_neighbour(t.k, r, n)) : 0;
  }
  return 0;
}

bool parametrised(Basis b) {
  return b == Basis::mod_shift || b == Basis::div_k || b == Basis::mod_k || b == Basis::share || b == Basis::grid;
}

// The range of k searched for a parametrised term.
std::pair<int64_t, int64_t> param_range(Basis b, int64_t max_n) {
  if (b == Basis::mod_shift) return {-max_n, max_n};
  // A total dealt over the ranks: up to kMaxGroup things per rank at the largest count.
  if (b == Basis::share) return {1, kMaxGroup * max_n};
  if (b == Basis::grid) return {0, grid_shift_count() - 1};
  return {2, kMaxGroup};
}

// Terms in a model at most ("strong scaling, full" has four): the normal
// equations live on the stack, as the model search solves them thousands
// of times per quantity (every k of a parametrised term).
constexpr size_t kMaxTerms = 4;
using Coefs = std::array<long double, kMaxTerms>;

// Least squares through the normal equations, Gaussian elimination with
// partial pivoting; false when the columns are not independent. row(i, x)
// fills x[0..p) with row i and returns its value.
template <class Row>
bool solve(size_t p, size_t count, Row row, Coefs& coef) {
  long double m[kMaxTerms][kMaxTerms + 1] = {};
  long double x[kMaxTerms];
  for (size_t i = 0; i < count; ++i) {
    long double y = row(i, x);
    for (size_t a = 0; a < p; ++a) {
      for (size_t b = 0; b < p; ++b) m[a][b] += x[a] * x[b];
      m[a][p] += x[a] * y;
    }
  }
  long double scale = 0;
  for (size_t a = 0; a < p; ++a) scale = std::max(scale, std::fabs(m[a][a]));
  for (size_t c = 0; c < p; ++c) {
    size_t piv = c;
    for (size_t a = c + 1; a < p; ++a)
      if (std::fabs(m[a][c]) > std::fabs(m[piv][c])) piv = a;
    if (std::fabs(m[piv][c]) <= scale * 1e-14L || m[piv][c] == 0) return false;
    if (piv != c)
      for (size_t b = 0; b <= p; ++b) std::swap(m[c][b], m[piv][b]);
    for (size_t a = 0; a < p; ++a) {
      if (a == c) continue;
      long double f = m[a][c] / m[c][c];
      for (size_t b = c; b <= p; ++b) m[a][b] -= f * m[c][b];
    }
  }
  for (size_t c = 0; c < p; ++c) coef[c] = m[c][p] / m[c][c];
  return true;
}

// The model of `terms` fitted to points (r, n, y) given by pt(i).
template <class Point>
bool fit_terms(const std::vector<Term>& terms, size_t count, Point pt, Coefs& coef) {
  if (terms.size() > kMaxTerms) return false;
  return solve(
      terms.size(), count,
      [&](size_t i, long double* x) {
        auto [r, n, y] = pt(i);
        for (size_t t = 0; t < terms.size(); ++t) x[t] = value_of(terms[t], r, n);
        return y;
      },
      coef);
}

long double eval_terms(const std::vector<Term>& terms, const Coefs& coef, int64_t r, int64_t n) {
  long double v = 0;
  for (size_t i = 0; i < terms.size(); ++i) v += coef[i] * value_of(terms[i], r, n);
  return v;
}

Fit make_fit(const char* name, const std::vector<Term>& terms, const Coefs& coef) {
  return Fit{name, terms, std::vector<long double>(coef.begin(), coef.begin() + ptrdiff_t(terms.size()))};
}

bool exact(long double got, int64_t want) {
  long double tol = kExact * std::max<long double>(1, std::fabs(static_cast<long double>(want)));
  return std::fabs(got - static_cast<long double>(want)) <= tol;
}

// Distinct (r, n) points; false when one point has two values.
bool distinct_points(std::span<const Sample> samples, std::vector<Sample>* out) {
  std::map<std::pair<int64_t, int64_t>, int64_t> seen;
  for (const Sample& s : samples) {
    auto [it, fresh] = seen.emplace(std::make_pair(s.r, s.n), s.y);
    if (!fresh && it->second != s.y) return false;
  }
  out->clear();
  for (const auto& [rn, y] : seen) out->push_back({rn.first, rn.second, y});
  return true;
}

// Whether a model of a parametrised term, alone or plus a constant, can
// fit every point: a quick test in integers, for the parameter search tries
// hundreds of k per quantity and most fail at the first points. The term
// takes integer values and its coefficient must be whole (try_terms), so
// two points of different term values give the coefficient, or prove none.
bool may_fit(const std::vector<Term>& terms, const std::vector<Sample>& pts) {
  bool constant = terms.size() == 2 && terms[0].basis == Basis::one;
  if (terms.size() != (constant ? 2u : 1u) || !parametrised(terms.back().basis) || pts.empty()) return true;
  auto x = [&](const Sample& s) { return int64_t(value_of(terms.back(), s.r, s.n)); };
  const Sample& a = pts.front();
  int64_t xa = x(a);
  __int128 c = 0, base = 0;
  size_t j = 1;
  if (!constant) {
    if (xa == 0) return a.y == 0;  // c * 0 gives no other value; y = 0 leaves c open
    if (a.y % xa != 0) return false;
    c = a.y / xa;
  } else {
    int64_t xj = xa;
    for (; j < pts.size() && (xj = x(pts[j])) == xa; ++j)
      if (pts[j].y != a.y) return false;
    if (j == pts.size()) return true;  // one term value: the full solve decides
    __int128 dy = __int128(pts[j].y) - a.y, dx = __int128(xj) - xa;
    if (dy % dx != 0) return false;
    c = dy / dx;
    base = __int128(a.y) - c * xa;
  }
  for (size_t i = 1; i < pts.size(); ++i)
    if (base + c * x(pts[i]) != pts[i].y) return false;
  return true;
}

std::optional<Fit> try_terms(const char* name, const std::vector<Term>& terms, const std::vector<Sample>& pts) {
  if (!may_fit(terms, pts)) return std::nullopt;
  Coefs coef;
  auto pt = [&](size_t i) { return std::tuple(pts[i].r, pts[i].n, static_cast<long double>(pts[i].y)); };
  if (!fit_terms(terms, pts.size(), pt, coef)) return std::nullopt;
  for (const Sample& s : pts)
    if (!exact(eval_terms(terms, coef, s.r, s.n), s.y)) return std::nullopt;
  // A parametrised term counts ranks, groups or entries: its coefficient is
  // a whole size. A fraction fits by coincidence (rank 0 alone, 11, 10, 10,
  // 10 at 3 to 6 ranks, is 11 - ((r+3) mod n)/3, 10 at any larger count).
  for (size_t i = 0; i < terms.size(); ++i)
    if (parametrised(terms[i].basis) && !exact(coef[i], int64_t(std::llround(coef[i])))) return std::nullopt;
  return make_fit(name, terms, coef);
}

// Whether (r+k) mod n is r+k somewhere or wraps differently at two samples:
// where every sample wraps alike the term is r+k-w*n, which the linear
// models of r and n say plainly, and extrapolate without a wrap the samples
// never showed (16952+2048*((r-6) mod n) over ranks 2 to 5 at 5 and 6 ranks
// is 4664+2048*(r+n), and differs at 8 ranks).
bool wraps(int64_t k, const std::vector<Sample>& pts) {
  auto wrap = [k](const Sample& s) {
    int64_t v = s.r + k;
    return v >= 0 ? v / s.n : -((-v + s.n - 1) / s.n);
  };
  return std::any_of(pts.begin(), pts.end(),
                     [&](const Sample& s) { return s.n > 0 && wrap(s) != wrap(pts.front()); }) ||
         wrap(pts.front()) == 0;
}

// Each fit of the model to the points, one per value of its searched
// parameter if any, until `take` returns false.
template <class Take>
void each_fit(const ModelSpec& m, const std::vector<Sample>& pts, int64_t max_n, Take take) {
  auto param = std::find_if(m.terms.begin(), m.terms.end(), parametrised);
  std::vector<Term> terms;
  for (Basis b : m.terms) terms.push_back({b, 0});
  if (param == m.terms.end()) {
    if (auto f = try_terms(m.name, terms, pts)) take(std::move(*f));
    return;
  }
  size_t at = size_t(param - m.terms.begin());
  auto [lo, hi] = param_range(*param, max_n);
  for (int64_t k = lo; k <= hi; ++k) {
    terms[at].k = k;
    auto f = try_terms(m.name, terms, pts);
    if (!f || (*param == Basis::mod_shift && !wraps(k, pts))) continue;
    if (!take(std::move(*f))) return;
  }
}

// The model's coefficients for the points, searching its parameter if any.
std::optional<Fit> fit_model(const ModelSpec& m, const std::vector<Sample>& pts, int64_t max_n) {
  bool share = std::find(m.terms.begin(), m.terms.end(), Basis::share) != m.terms.end();
  std::optional<Fit> found;
  size_t fits = 0;
  each_fit(m, pts, max_n, [&](Fit f) {
    if (!fits++) found = std::move(f);
    // A total the samples do not pin down (rank 0 alone, 11, 10, 10, 10 at
    // 3 to 6 ranks, is 8 + share(8,r,n) and 9 + share(4,r,n), which part at
    // 8 ranks) is no model: the ranks that tell the totals apart are needed.
    return share && fits < 2;
  });
  if (fits > 1 && share) return std::nullopt;
  return found;
}

size_t free_parameters(const std::vector<Basis>& terms) {
  return terms.size() + size_t(std::any_of(terms.begin(), terms.end(), parametrised));
}

std::string coef_text(long double c) {
  long double rounded = std::round(c);
  if (std::fabs(c - rounded) <= 1e-9L * std::max<long double>(1, std::fabs(c)))
    return fmt::format("{}", static_cast<long long>(rounded));
  return fmt::format("{:.6g}", static_cast<double>(c));
}

std::string term_text(const Term& t) {
  switch (t.basis) {
    case Basis::one:
      return "";
    case Basis::n:
      return "n";
    case Basis::n2:
      return "n^2";
    case Basis::inv_n:
      return "/n";
    case Basis::r:
      return "r";
    case Basis::r_over_n:
      return "r/n";
    case Basis::r_times_n:
      return "r*n";
    case Basis::mod_shift:
      return t.k ? fmt::format("((r{:+}) mod n)", t.k) : "(r mod n)";
    case Basis::div_k:
      return fmt::format("(r/{})", t.k);
    case Basis::mod_k:
      return fmt::format("(r mod {})", t.k);
    case Basis::share:
      return fmt::format("share({},r,n)", t.k);
    case Basis::grid:
      return grid_shift_text(t.k);
  }
  return "?";
}

}  // namespace

int64_t share_of(int64_t k, int64_t r, int64_t n) {
  if (n <= 0 || k < 0 || r < 0 || r >= n) return 0;
  return k / n + (r < k % n ? 1 : 0);
}

std::vector<int64_t> share_totals(std::span<const Sample> samples) {
  std::vector<Sample> pts;
  std::vector<int64_t> out;
  if (samples.empty() || !distinct_points(samples, &pts)) return out;
  int64_t max_n = 0;
  for (const Sample& s : pts) max_n = std::max(max_n, s.n);
  auto [lo, hi] = param_range(Basis::share, max_n);
  for (int64_t k = lo; k <= hi; ++k) {
    int64_t c = pts.front().y - share_of(k, pts.front().r, pts.front().n);
    bool varies = false, fits = true;
    for (const Sample& s : pts) {
      fits = fits && s.y == c + share_of(k, s.r, s.n);
      varies = varies || s.y != pts.front().y;
    }
    if (fits && varies) out.push_back(k);
  }
  return out;
}

const std::vector<ModelSpec>& exact_models() {
  using B = Basis;
  // The first four are also the timing models (fit_timing).
  static const std::vector<ModelSpec> models = {
      {"constant", {B::one}},
      {"linear in n", {B::one, B::n}},
      {"inverse", {B::inv_n}},
      {"inverse + constant", {B::one, B::inv_n}},
      {"rank-linear", {B::one, B::r}},
      {"strong scaling", {B::r_over_n}},
      {"strong scaling + constant", {B::one, B::r_over_n}},
      // Before model 5: a count that falls as n grows is more likely a
      // rank's share of a deal than a rank shift.
      {"share of a fixed total", {B::share}},
      {"share of a fixed total + constant", {B::one, B::share}},
      {"rank-modulo (model 5)", {B::mod_shift}},
      {"rank-modulo + constant", {B::one, B::mod_shift}},
      {"group of k", {B::one, B::div_k}},
      {"member of k", {B::one, B::mod_k}},
      {"grid neighbour", {B::grid}},
      {"rank-linear + n", {B::one, B::r, B::n}},
      {"quadratic", {B::one, B::n, B::n2}},
      {"rank-linear times n", {B::one, B::r, B::r_times_n}},
      {"strong scaling, full", {B::one, B::inv_n, B::r, B::r_over_n}},
  };
  return models;
}

long double Fit::eval(int64_t r, int64_t n) const {
  if (!per_rank.empty()) {
    auto at = std::lower_bound(per_rank.begin(), per_rank.end(), std::make_pair(r, INT64_MIN));
    return at != per_rank.end() && at->first == r ? static_cast<long double>(at->second) : NAN;
  }
  long double v = 0;
  for (size_t i = 0; i < terms.size(); ++i) v += coef[i] * value_of(terms[i], r, n);
  return v;
}

std::optional<int64_t> Fit::eval_int(int64_t r, int64_t n) const {
  long double v = eval(r, n);
  long double rounded = std::round(v);
  if (!(std::fabs(v - rounded) <= kExact * std::max<long double>(1, std::fabs(v)))) return std::nullopt;
  if (rounded < -9.2e18L || rounded > 9.2e18L) return std::nullopt;
  return static_cast<int64_t>(rounded);
}

std::string Fit::formula() const {
  if (!per_rank.empty()) {
    std::string table;
    for (size_t i = 0; i < per_rank.size() && i < 8; ++i)
      table += fmt::format("{}r={}: {}", i ? ", " : "", per_rank[i].first, per_rank[i].second);
    return "{" + table + (per_rank.size() > 8 ? ", ...}" : "}");
  }
  std::string out;
  for (size_t i = 0; i < terms.size(); ++i) {
    long double c = coef[i];
    if (std::fabs(c) < 1e-12L && terms.size() > 1) continue;
    std::string t = term_text(terms[i]);
    std::string part;
    if (t.empty())
      part = coef_text(c);
    else if (t == "/n")
      part = coef_text(c) + "/n";
    else if (coef_text(c) == "1")
      part = t;
    else if (coef_text(c) == "-1")
      part = "-" + t;
    else
      part = coef_text(c) + "*" + t;
    if (!out.empty() && part[0] != '-') out += "+";
    out += part;
  }
  return out.empty() ? "0" : out;
}

bool Fit::rank_free() const {
  if (!per_rank.empty()) return false;
  for (size_t i = 0; i < terms.size(); ++i) {
    Basis b = terms[i].basis;
    bool uses_r = b == Basis::r || b == Basis::r_over_n || b == Basis::r_times_n || parametrised(b);
    if (uses_r && std::fabs(coef[i]) > 1e-12L) return false;
  }
  return true;
}

std::vector<int64_t> Fit::breaks(int64_t n) const {
  std::vector<int64_t> out;
  for (const Term& t : terms) {
    if (t.basis == Basis::mod_shift) out.push_back(((-t.k) % n + n) % n);
    if ((t.basis == Basis::div_k || t.basis == Basis::mod_k) && t.k > 0)
      for (int64_t r = t.k; r < n; r += t.k) out.push_back(r);
    if (t.basis == Basis::share && t.k >= 0) out.push_back(t.k % n);
    if (t.basis == Basis::grid)
      for (int64_t r : grid_breaks(t.k, n)) out.push_back(r);
  }
  std::erase_if(out, [n](int64_t r) { return r <= 0 || r >= n; });
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
std::optional<Fit> fit_per_rank(std::vector<Sample> pts) {
  std::sort(pts.begin(), pts.end(),
            [](const Sample& a, const Sample& b) { return a.r < b.r || (a.r == b.r && a.n < b.n); });
  Fit f{"per rank", {}, {}};
  for (size_t i = 0; i < pts.size();) {
    size_t j = i;
    while (j < pts.size() && pts[j].r == pts[i].r) {
      if (pts[j].y != pts[i].y) return std::nullopt;
      ++j;
    }
    if (j - i < 2) return std::nullopt;  // one rank count: nothing says it stays
    f.per_rank.emplace_back(pts[i].r, pts[i].y);
    i = j;
  }
  return f;
}
}  // namespace

std::optional<Fit> fit_exact(std::span<const Sample> samples) {
  std::vector<Sample> pts;
  if (samples.empty() || !distinct_points(samples, &pts)) return std::nullopt;
  bool constant = std::all_of(pts.begin(), pts.end(), [&](const Sample& s) { return s.y == pts.front().y; });
  if (constant) return Fit{"constant", {{Basis::one, 0}}, {static_cast<long double>(pts.front().y)}};
  int64_t max_n = 0, min_n = INT64_MAX;
  for (const Sample& s : pts) {
    max_n = std::max(max_n, s.n);
    min_n = std::min(min_n, s.n);
  }
  if (min_n == max_n) return std::nullopt;  // one rank count says nothing about n
  for (bool checked : {true, false}) {
    for (const ModelSpec& m : exact_models()) {
      if (checked ? pts.size() <= m.terms.size() : pts.size() != m.terms.size()) continue;
      if (auto f = fit_model(m, pts, max_n)) {
        f->determined = !checked;
        return f;
      }
    }
    if (checked)
      if (auto f = fit_per_rank(pts)) return f;
  }
  return std::nullopt;
}

size_t free_parameters(const Fit& fit) {
  std::vector<Basis> terms;
  for (const Term& t : fit.terms) terms.push_back(t.basis);
  return free_parameters(terms);
}

std::vector<Fit> exact_rivals(std::span<const Sample> samples, const Fit& fit) {
  std::vector<Fit> out;
  std::vector<Sample> pts;
  if (fit.determined || !fit.per_rank.empty() || !distinct_points(samples, &pts)) return out;
  int64_t max_n = 0;
  for (const Sample& s : pts) max_n = std::max(max_n, s.n);
  size_t budget = free_parameters(fit);
  for (const ModelSpec& m : exact_models()) {
    if (pts.size() <= m.terms.size() || free_parameters(m.terms) > budget) continue;
    each_fit(m, pts, max_n, [&](Fit f) {
      if (std::string_view(f.name) != fit.name || f.terms != fit.terms) out.push_back(std::move(f));
      return true;
    });
  }
  return out;
}

Fit fit_best(std::span<const Sample> samples) {
  std::map<std::pair<int64_t, int64_t>, std::pair<long double, size_t>> sums;
  for (const Sample& s : samples) {
    auto& [sum, count] = sums[{s.r, s.n}];
    sum += static_cast<long double>(s.y);
    ++count;
  }
  std::vector<std::pair<std::pair<int64_t, int64_t>, long double>> pts;
  long double mean = 0;
  for (const auto& [rn, sc] : sums) {
    pts.emplace_back(rn, sc.first / static_cast<long double>(sc.second));
    mean += pts.back().second;
  }
  mean = pts.empty() ? 0 : mean / static_cast<long double>(pts.size());
  Fit best{"constant", {{Basis::one, 0}}, {mean}};
  long double best_err = HUGE_VALL;
  for (const ModelSpec& m : exact_models()) {
    if (std::any_of(m.terms.begin(), m.terms.end(), parametrised) || pts.size() <= m.terms.size()) continue;
    std::vector<Term> terms;
    for (Basis b : m.terms) terms.push_back({b, 0});
    Coefs coef;
    auto pt = [&](size_t i) { return std::tuple(pts[i].first.first, pts[i].first.second, pts[i].second); };
    if (!fit_terms(terms, pts.size(), pt, coef)) continue;
    Fit f = make_fit(m.name, terms, coef);
    long double ssr = 0;
    for (const auto& [rn, v] : pts) ssr += (f.eval(rn.first, rn.second) - v) * (f.eval(rn.first, rn.second) - v);
    long double err = std::sqrt(ssr / static_cast<long double>(pts.size() - m.terms.size()));
    // The constant is the first model: it always counts, so noise alone
    // never buys a model that grows with n.
    if (best_err == HUGE_VALL || err < best_err / 2) {
      best_err = err;
      best = std::move(f);
    }
  }
  return best;
}

int64_t approximate(const Fit& fit, int64_t r, int64_t n, int64_t floor) {
  long double v = std::round(fit.eval(r, n));
  if (!(v < 9.2e18L)) v = 9.2e18L;  // also NaN
  return std::max(floor, static_cast<int64_t>(std::max(v, -9.2e18L)));
}

double TimingFit::predict(int64_t n) const { return std::max(0.0, double(fit.eval(0, n))); }

namespace {
// A time is never negative: a model that crosses zero anywhere from the
// smallest input up (a noisy fall fitted as a + b/n with a < 0, a falling
// line) would extrapolate a call that takes no time, where the models that
// stay positive carry what the inputs showed. The models are monotonic past
// the smallest input, so its value and a far one's bound all of them.
bool stays_positive(const Fit& f, std::span<const std::pair<int64_t, double>> points) {
  int64_t from = points.front().first;
  for (const auto& p : points) from = std::min(from, p.first);
  return f.eval(0, from) >= 0 && f.eval(0, int64_t(1) << 40) >= 0;
}
}  // namespace

TimingFit fit_timing(std::span<const std::pair<int64_t, double>> points) {
  using B = Basis;
  // ScalaExtrap's four timing models open the registry.
  std::span<const ModelSpec> models = std::span(exact_models()).first(4);
  double mean = 0;
  for (const auto& p : points) mean += p.second;
  mean = points.empty() ? 0 : mean / double(points.size());
  TimingFit best{Fit{"constant", {{B::one, 0}}, {static_cast<long double>(mean)}}};
  double best_err = HUGE_VAL;
  for (const ModelSpec& m : models) {
    if (points.size() <= m.terms.size()) continue;
    std::vector<Term> terms;
    for (Basis b : m.terms) terms.push_back({b, 0});
    Coefs coef;
    auto pt = [&](size_t i) {
      return std::tuple(int64_t(0), points[i].first, static_cast<long double>(points[i].second));
    };
    if (!fit_terms(terms, points.size(), pt, coef)) continue;
    Fit f = make_fit(m.name, terms, coef);
    if (!stays_positive(f, points)) continue;
    long double ssr = 0;
    for (const auto& [n, v] : points) ssr += (f.eval(0, n) - v) * (f.eval(0, n) - v);
    double err = std::sqrt(double(ssr) / double(points.size() - m.terms.size())) / std::max(std::fabs(mean), 1e-300);
    // A model with more coefficients must do clearly better.
    if (err < best_err * (1 - 1e-6)) {
      best_err = err;
      best.fit = std::move(f);
    }
  }
  return best;
}

}  // namespace mpior::extrap
