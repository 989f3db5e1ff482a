// A structural quantity whose values several models of the registry fit
// exactly, with as few free parameters, predicts nothing when those models
// give a target rank different values: the registry's order would pick one
// silently. Ranks seen at 8 (rank 7) and 12 ranks (7 to 11) writing at
// 2048 + 65536*(r+n) fit 985088 + 65536*((r+9) mod n) as well, and at 16
// ranks rank 7 writes at 1509376 or 985088; at 9 ranks the two part too, so
// the refusal names that count.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "extrap/models.hpp"
#include "extrap/site_fit.hpp"
#include "trace/tool_error.hpp"

namespace mpior::extrap {

// The refusal of such a quantity: the values fit, so no other reading of the
// position (a permutation, a random deal) applies.
class Ambiguous : public ToolError {
 public:
  using ToolError::ToolError;
};

// The ranks of a stream class at a rank count (its rank rule).
using RanksAt = std::function<std::vector<int64_t>(int64_t)>;

// A rival of a chosen fit, and where the two part.
struct Parting {
  Fit rival;
  int64_t rank = 0;                     // a target rank they give different values
  std::optional<int64_t> ours, theirs;  // its values (nullopt: not an integer)
  int64_t decide_n = 0;                 // a rank count not traced where they part too, or 0
  int64_t decide_rank = 0;              // the rank they part at there
  std::optional<int64_t> decide_ours, decide_theirs;
};

// The first exact rival of `fit` (exact_rivals() of ev.exact, reproducing as
// many of the site's samples when ev.groups has some) that gives one of
// `ranks` another integer at n ranks, with the smallest rank count not
// traced, between the smallest traced and n, where the class's ranks
// (`ranks_at`) tell the two apart.
std::optional<Parting> parting_rival(const Fit& fit, const SiteEvidence& ev, std::span<const int64_t> ranks, int64_t n,
                                     const RanksAt& ranks_at);

// "<where>: the models a and b fit every value exactly ... and part at N
// ranks (rank r: x or y):<samples>\n  ... trace at M ranks too ...".
std::string parting_refusal(const std::string& where, const Fit& fit, const Parting& p, int64_t n,
                            const std::string& samples);

}  // namespace mpior::extrap
