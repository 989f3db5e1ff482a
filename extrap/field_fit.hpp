// A quantity of a stream class fitted field by field over (r, n), and the
// fits evaluated for a rank at the target: every quantity streams.cpp
// extrapolates goes through here. An exact fit that other models may rival
// is weighed against the position at every rank (site_fit.hpp) and refused
// where a rival parts from it at the target (ambiguity.hpp); an incidental
// quantity that no model fits takes the best fit instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "extrap/ambiguity.hpp"
#include "extrap/seq_fit.hpp"
#include "extrap/stream_classes.hpp"

namespace mpior::extrap {

// The class whose quantities are fitted, and the target they are fitted for.
struct FitTarget {
  const std::vector<Input>& inputs;
  const StreamClass& cls;
  const std::vector<int64_t>& ranks;  // the class's ranks at the target
  int64_t n;                          // the target's rank count
  const RanksAt& ranks_at;
  bool strict;  // --strict: an incidental quantity must fit exactly too
};

// Where a refusal points: "<class>, position 3 (pwrite at call site 0x..),
// offset", or "<class>, loop node 2, iterations" when leaf < 0.
std::string quantity_where(const StreamClass& cls, int32_t leaf, int32_t node, const char* what);

// Every field fitted exactly; an incidental one (`why` set) that no model
// fits takes the best fit, and one whose loop shapes differ one mean value.
// site_field: the field (dealt.hpp's numbering) whose ambiguous fit is
// weighed against its site's other streams, or -1.
SeqFit fit_fields(const FitTarget& t, const std::vector<SeqSample>& given, int32_t leaf, int32_t node, const char* what,
                  const char* why, int site_field);

// Rank r's items at the target, as `fits` give them, appended to `out`.
void evaluate(const FitTarget& t, const SeqFit& fits, int64_t r, int32_t leaf, int32_t node, const char* what,
              std::vector<trace::SeqItem>& out);

}  // namespace mpior::extrap
