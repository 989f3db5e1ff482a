// Which ranks run which stream at a rank count never traced (scalaioextrap
// §III-B1, rank lists): each class of streams gets a predicate over (r, n) —
// rank 0, the last rank, every k-th rank, a fixed rank, the ranks whose share
// of a fixed total dealt over n holds k or more (HDF5's metadata writers at
// file close), a conjunction of these, or "all the others" — tried as a decision list, most specific first,
// so that "every 4th rank but rank 0" is rank 0's rule followed by r mod 4 = 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mpior::extrap {

struct RankPredicate {
  enum class Atom : uint8_t { all, eq, eq_last, mod, lt, ge_last, share_ge, frac };
  Atom a = Atom::all;
  // eq: r == x; eq_last: r == n-1-x; mod: r mod k == x; lt: r < x; ge_last: r >= n-x;
  // share_ge: rank r's share of x things dealt over n ranks is at least k (models.hpp share_of)
  // frac: r == n*p/q + x where q divides n*p, k = q*64 + p
  int64_t x = 0, k = 0;
  Atom b = Atom::all;  // second conjunct (all: none)
  int64_t bx = 0, bk = 0;

  bool test(int64_t r, int64_t n) const;
  std::string text() const;
};

struct RankRule {
  size_t cls = 0;
  RankPredicate pred;
};

// ns: the inputs' rank counts; sets[c][i]: the ranks (ascending) of class c
// in input i. Classes must partition [0, ns[i]) at every input. Returns the
// decision list, or throws ToolError describing the classes no predicate
// separates.
std::vector<RankRule> rank_rules(const std::vector<int64_t>& ns,
                                 const std::vector<std::vector<std::vector<int64_t>>>& sets,
                                 const std::vector<std::string>& class_names);

// The class of every rank 0..n-1 under the rules (-1 when none applies).
std::vector<int32_t> assign_ranks(const std::vector<RankRule>& rules, int64_t n);

}  // namespace mpior::extrap
