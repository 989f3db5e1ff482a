// Sequences of a position's values across the inputs and their field by
// field fits: the samples (rank r of input n), the texts refusals show, and
// the fits of each item of a sequence (made by field_fit.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "extrap/models.hpp"
#include "trace/value_seq.hpp"

namespace mpior::extrap {

// One sample of a whole sequence: rank r of input n.
struct SeqSample {
  int64_t r, n;
  std::span<const trace::SeqItem> items;
  int64_t offset;
};

bool same_shape(std::span<const trace::SeqItem> a, std::span<const trace::SeqItem> b);
bool one_shape(const std::vector<SeqSample>& samples);
// The samples with every sequence of two or more equally spaced scalars as
// one loop (a trace keeps two values as two scalars, cheaper than a loop, so
// a loop of n iterations has another shape at 2 ranks), when that gives
// every sample one shape; empty otherwise. `store` holds the new items.
std::vector<SeqSample> as_loops(const std::vector<SeqSample>& samples, std::vector<std::vector<trace::SeqItem>>& store);
// The samples as plain lists of values, when every sample has as many
// (at most kMaxFlatValues): the trace compresses each run's values on its
// own, and a run of equally spaced values at one count (1, 2, 3: rank 0's
// neighbours at 12 ranks) is no run at another (1, 3, 4 at 16). Empty
// otherwise.
inline constexpr size_t kMaxFlatValues = 1 << 14;
std::vector<SeqSample> as_flat(const std::vector<SeqSample>& samples, std::vector<std::vector<trace::SeqItem>>& store);
// One sample per line, for refusals; on one line, for warnings.
std::string samples_text(const std::vector<SeqSample>& samples);
std::string samples_line(const std::vector<SeqSample>& samples);

// What the refusal of a structural quantity says would resolve it.
extern const char* const kStructureHint;
// Marks the refusals of values that look dealt (dealt_hint).
extern const char* const kDealtMark;

// When values (or their number, `what`) follow a rank's share of a fixed
// total dealt over the ranks, they come from one table the ranks split
// (HDF5's metadata cache entries at file close): the refusal says so.
std::string dealt_hint(const std::vector<Sample>& pts, const char* what);
std::string dealt_lengths_hint(const std::vector<SeqSample>& samples);

// One fitted field of a sequence's items.
struct FieldFit {
  size_t item;
  enum { scalar, shift, count } field;
  Fit fit;
  bool approximate = false;  // best fit, rounded, never below floor
  int64_t floor = 0;
};

// A sequence's fitted fields and the item shape they fill.
struct SeqFit {
  std::vector<FieldFit> fields;
  std::vector<trace::SeqItem> shape;
  bool permuted = false;  // fits the sorted values: the order is approximated (permuted.hpp)
  bool approximate() const;
};

// The lowest value, or 0 when none is negative.
int64_t floor_of(const std::vector<Sample>& pts);

// "item 0 value = 65536*r; item 1 count = n" for --dump, constants left out;
// the models' names are added to *names ("rank-linear + linear in n").
std::string fits_text(const SeqFit& fits, std::string* names);

// Samples of different loop shapes: each rank's mean value, one scalar.
SeqFit mean_fit(const std::vector<SeqSample>& samples);

}  // namespace mpior::extrap
