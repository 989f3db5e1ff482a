#include "extrap/ambiguity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace mpior::extrap {

namespace {

// Evaluations spent looking for a rank count that decides: the search stops
// there (without naming one) rather than slow an extrapolation down.
constexpr int64_t kDecideBudget = 1 << 22;

// Both models give an integer at (r, n), and not the same: a model that
// gives a fraction predicts no structure there.
bool parts_at(const Fit& a, const Fit& b, int64_t r, int64_t n) {
  std::optional<int64_t> x = a.eval_int(r, n), y = b.eval_int(r, n);
  return x && y && *x != *y;
}

// The smallest rank count not traced, above the smallest traced and below
// n, where the fits give one of the class's ranks different values.
void find_decider(const Fit& fit, Parting& p, const std::set<int64_t>& traced, int64_t n, const RanksAt& ranks_at) {
  int64_t spent = 0;
  for (int64_t m = *traced.begin() + 1; m < n && spent < kDecideBudget; ++m) {
    if (traced.count(m)) continue;
    for (int64_t r : ranks_at(m)) {
      ++spent;
      if (!parts_at(fit, p.rival, r, m)) continue;
      p.decide_n = m;
      p.decide_rank = r;
      p.decide_ours = fit.eval_int(r, m);
      p.decide_theirs = p.rival.eval_int(r, m);
      return;
    }
    spent += m;  // the rank rule's walk
  }
}

// The first of `ranks` (ascending) where the fits part at n ranks. Both are
// linear in r between their breaks: a piece whose first and last ranks
// agree agrees throughout, so only a piece that differs at an end is walked
// (an extrapolation to 65,536 ranks checks whole classes this way).
std::optional<int64_t> first_parting(const Fit& a, const Fit& b, std::span<const int64_t> ranks, int64_t n) {
  std::vector<int64_t> cuts = a.breaks(n), more = b.breaks(n);
  cuts.insert(cuts.end(), more.begin(), more.end());
  cuts.push_back(0);
  cuts.push_back(n);
  std::sort(cuts.begin(), cuts.end());
  auto same = [&](int64_t r) {
    long double x = a.eval(r, n), y = b.eval(r, n);
    return std::fabs(x - y) <= 1e-9L * std::max<long double>(1, std::fabs(x));
  };
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    auto lo = std::lower_bound(ranks.begin(), ranks.end(), cuts[i]);
    auto hi = std::lower_bound(lo, ranks.end(), cuts[i + 1]);
    if (lo == hi || (same(*lo) && same(*(hi - 1)))) continue;
    auto at = std::find_if(lo, hi, [&](int64_t r) { return parts_at(a, b, r, n); });
    if (at != hi) return *at;
  }
  return std::nullopt;
}

std::string value_text(const std::optional<int64_t>& v) { return v ? fmt::format("{}", *v) : "no integer"; }

}  // namespace

std::optional<Parting> parting_rival(const Fit& fit, const SiteEvidence& ev, std::span<const int64_t> ranks, int64_t n,
                                     const RanksAt& ranks_at) {
  std::vector<Fit> rivals = exact_rivals(ev.exact, fit);
  if (rivals.empty()) return std::nullopt;
  size_t score = ev.groups.empty() ? 0 : site_score(fit, ev.groups);
  for (Fit& rival : rivals) {
    if (!ev.groups.empty() && site_score(rival, ev.groups) < score) continue;
    std::optional<int64_t> r = first_parting(fit, rival, ranks, n);
    if (!r) continue;
    Parting p;
    p.rank = *r;
    p.ours = fit.eval_int(*r, n);
    p.theirs = rival.eval_int(*r, n);
    p.rival = std::move(rival);
    std::set<int64_t> traced;
    for (const Sample& s : ev.exact) traced.insert(s.n);
    find_decider(fit, p, traced, n, ranks_at);
    return p;
  }
  return std::nullopt;
}

std::string parting_refusal(const std::string& where, const Fit& fit, const Parting& p, int64_t n,
                            const std::string& samples) {
  std::string text = fmt::format(
      "{}: the models {} = {} and {} = {} fit every value exactly, with as many free parameters, and part at {} "
      "ranks (rank {}: {} or {}):{}\n  Which one holds is not known from these rank counts: ",
      where, fit.name, fit.formula(), p.rival.name, p.rival.formula(), n, p.rank, value_text(p.ours),
      value_text(p.theirs), samples);
  if (!p.decide_n) return text + "trace at more rank counts, or larger ones.";
  return text + fmt::format("trace at {} ranks too (there rank {} gets {} or {}), and the values choose.", p.decide_n,
                            p.decide_rank, value_text(p.decide_ours), value_text(p.decide_theirs));
}

}  // namespace mpior::extrap
