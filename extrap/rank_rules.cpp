#include "extrap/rank_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "extrap/models.hpp"
#include "trace/tool_error.hpp"

namespace mpior::extrap {

namespace {

using Atom = RankPredicate::Atom;

constexpr int64_t kMaxModulus = 64;
// Largest share tried by share_ge: a rank writing one entry, a loop of two or three.
constexpr int64_t kMaxShare = 3;
// Fractions of the rank count tried by frac: a processor grid with one
// dimension growing (2 x 2 x n/4) puts a neighbour of rank 0 at n/4 or n/2.
constexpr int64_t kMaxDenominator = 8, kMaxFracOffset = 2;

bool atom_test(Atom a, int64_t x, int64_t k, int64_t r, int64_t n) {
  switch (a) {
    case Atom::all:
      return true;
    case Atom::eq:
      return r == x;
    case Atom::eq_last:
      return r == n - 1 - x;
    case Atom::mod:
      return k > 0 && r % k == x;
    case Atom::lt:
      return r < x;
    case Atom::ge_last:
      return r >= n - x;
    case Atom::share_ge:
      return share_of(x, r, n) >= k;
    case Atom::frac:
      return (n * (k % 64)) % (k / 64) == 0 && r == n * (k % 64) / (k / 64) + x;
  }
  return false;
}

std::string atom_text(Atom a, int64_t x, int64_t k) {
  switch (a) {
    case Atom::all:
      return "every other rank";
    case Atom::eq:
      return fmt::format("r = {}", x);
    case Atom::eq_last:
      return x ? fmt::format("r = n-{}", x + 1) : "r = n-1";
    case Atom::mod:
      return fmt::format("r mod {} = {}", k, x);
    case Atom::lt:
      return fmt::format("r < {}", x);
    case Atom::ge_last:
      return fmt::format("r >= n-{}", x);
    case Atom::share_ge:
      return fmt::format("share({},r,n) >= {}", x, k);
    case Atom::frac:
      return fmt::format("r = {}n/{}{}", k % 64 == 1 ? "" : std::to_string(k % 64), k / 64,
                         x ? fmt::format("{:+}", x) : "");
  }
  return "?";
}

// Candidate predicates, most specific and most regular first: "all" (which
// only the last class left can match: the classes partition the ranks), the
// boundary ranks, then every k-th rank (smallest k first), then other fixed
// ranks, ranges, and conjunctions. Ranges from the end stop short of the
// smallest rank count, where "r >= n-6" would still mean "every rank" and not
// at 8,192. A first-ranks range may reach past it: "r < 6" holding at 6 ranks
// (every rank) and at 7, 8, 9 (ranks 6 on left out) is a fixed set, as
// HDF5's collective metadata writers are (its first ranks, one entry each).
// Ranks writing two entries or more of such a fixed total are the first
// E mod n while E / n is 1, every rank while it is larger: share_ge. A rank
// at a fixed fraction of the rank count (frac: r = pn/q + c, where q
// divides pn) comes after the fixed ranks, so a rank that stays put is one.
std::vector<RankPredicate> candidates(int64_t min_n, int64_t max_n) {
  std::vector<RankPredicate> out;
  out.push_back({});
  out.push_back({Atom::eq, 0, 0});
  out.push_back({Atom::eq_last, 0, 0});
  int64_t max_k = std::min(kMaxModulus, max_n);
  std::vector<RankPredicate> mods;
  for (int64_t k = 2; k <= max_k; ++k)
    for (int64_t c = 0; c < k; ++c) mods.push_back({Atom::mod, c, k});
  out.insert(out.end(), mods.begin(), mods.end());
  for (int64_t a = 1; a < max_n; ++a) {
    out.push_back({Atom::eq, a, 0});
    out.push_back({Atom::eq_last, a, 0});
  }
  for (int64_t q = 2; q <= kMaxDenominator; ++q)
    for (int64_t p = 1; p < q; ++p)
      if (std::gcd(p, q) == 1)
        for (int64_t c = -kMaxFracOffset; c <= kMaxFracOffset; ++c) out.push_back({Atom::frac, c, q * 64 + p});
  for (int64_t a = 1; a < max_n; ++a) {
    out.push_back({Atom::lt, a, 0});
    if (a < min_n) out.push_back({Atom::ge_last, a, 0});
  }
  // A share of one or more is "r < total", a range above; two or three
  // entries make a rank's loop, a structure of its own.
  for (int64_t share = 2; share <= kMaxShare; ++share)
    for (int64_t total = share; total <= kMaxModulus * max_n; ++total) out.push_back({Atom::share_ge, total, share});
  for (Atom edge : {Atom::eq, Atom::eq_last})
    for (const RankPredicate& m : mods) out.push_back({edge, 0, 0, Atom::mod, m.x, m.k});
  return out;
}

// Whether pred picks exactly set[i] out of the remaining ranks at every input.
// Every k-th rank needs two of them seen at some input: a class that is one
// rank at every input (rank 1 of a ring whose rank 0 writes) is that fixed
// rank, and "r mod 4 = 1", true of it below 5 ranks, would add rank 5 at 8.
bool matches(const RankPredicate& pred, const std::vector<int64_t>& ns, const std::vector<std::vector<bool>>& remaining,
             const std::vector<std::vector<int64_t>>& set) {
  if (pred.a == Atom::mod && pred.b == Atom::all &&
      std::none_of(set.begin(), set.end(), [](const std::vector<int64_t>& s) { return s.size() >= 2; }))
    return false;
  for (size_t i = 0; i < ns.size(); ++i) {
    size_t at = 0;
    for (int64_t r = 0; r < ns[i]; ++r) {
      if (!remaining[i][size_t(r)] || !pred.test(r, ns[i])) continue;
      if (at >= set[i].size() || set[i][at] != r) return false;
      ++at;
    }
    if (at != set[i].size()) return false;
  }
  return true;
}

std::string sets_text(const std::vector<int64_t>& ns, const std::vector<std::vector<int64_t>>& set) {
  std::string out;
  for (size_t i = 0; i < ns.size(); ++i) {
    std::string ranks = set[i].empty() ? "none" : fmt::format("{}", fmt::join(set[i], ","));
    if (ranks.size() > 40) ranks = ranks.substr(0, 40) + "...";
    out += fmt::format("{}n={}: {}", i ? "; " : "", ns[i], ranks);
  }
  return out;
}

}  // namespace

bool RankPredicate::test(int64_t r, int64_t n) const { return atom_test(a, x, k, r, n) && atom_test(b, bx, bk, r, n); }

std::string RankPredicate::text() const {
  if (b == Atom::all) return atom_text(a, x, k);
  return atom_text(a, x, k) + " and " + atom_text(b, bx, bk);
}

std::vector<RankRule> rank_rules(const std::vector<int64_t>& ns,
                                 const std::vector<std::vector<std::vector<int64_t>>>& sets,
                                 const std::vector<std::string>& class_names) {
  auto [min_n, max_n] = std::minmax_element(ns.begin(), ns.end());
  std::vector<RankPredicate> preds = candidates(*min_n, *max_n);
  std::vector<std::vector<bool>> remaining;
  for (int64_t n : ns) remaining.emplace_back(size_t(n), true);
  std::vector<size_t> left(sets.size());
  for (size_t c = 0; c < left.size(); ++c) left[c] = c;
  std::vector<RankRule> rules;
  while (!left.empty()) {
    // The class whose rule comes earliest in the candidate order goes next.
    size_t best_pred = preds.size(), best_at = 0;
    for (size_t at = 0; at < left.size(); ++at)
      for (size_t p = 0; p < best_pred; ++p)
        if (matches(preds[p], ns, remaining, sets[left[at]])) {
          best_pred = p;
          best_at = at;
          break;
        }
    if (best_pred == preds.size()) {
      std::string what;
      for (size_t c : left) what += fmt::format("\n  {}: {}", class_names[c], sets_text(ns, sets[c]));
      throw ToolError(
          "cannot tell which ranks run which stream at another rank count: no rule (rank 0, the last "
          "rank, every k-th rank, a fixed rank) separates these streams' rank lists:" +
          what);
    }
    size_t c = left[best_at];
    rules.push_back({c, preds[best_pred]});
    for (size_t i = 0; i < ns.size(); ++i)
      for (int64_t r : sets[c][i]) remaining[i][size_t(r)] = false;
    left.erase(left.begin() + ptrdiff_t(best_at));
  }
  return rules;
}

std::vector<int32_t> assign_ranks(const std::vector<RankRule>& rules, int64_t n) {
  std::vector<int32_t> cls(size_t(n), -1);
  for (int64_t r = 0; r < n; ++r)
    for (const RankRule& rule : rules)
      if (rule.pred.test(r, n)) {
        cls[size_t(r)] = int32_t(rule.cls);
        break;
      }
  return cls;
}

}  // namespace mpior::extrap
