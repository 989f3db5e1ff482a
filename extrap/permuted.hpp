// Values that are a shuffle of a sequence that follows a model: IOR with
// random offsets (-z) writes each rank's blocks in an order drawn from a
// seed, different at every rank and rank count, so no model fits the order,
// though the sorted offsets fit exactly. Such a structure quantity is fitted
// sorted and emitted at the target in a deterministic pseudo-random order:
// the set of values is exact, the order an approximation (with a warning;
// --strict refuses). The order is seeded by the rank, the rank count and the
// sorted values, so positions that take the same set at one rank (lseek's
// offset and the write after it, a later read pass over the same blocks) get
// the same order and stay consistent with each other.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trace/value_seq.hpp"

namespace mpior::extrap {

// The values of items (plus offset) sorted ascending and folded into loops.
std::vector<trace::SeqItem> sorted_seq(std::span<const trace::SeqItem> items, int64_t offset);

// Shuffles v in the order seeded by (r, n, v as given).
void shuffle_values(std::vector<int64_t>& v, int64_t r, int64_t n);

// Replaces the sequence out[base...] (the sorted values of rank r at n ranks)
// by the same values, one scalar each, in the order seeded by (r, n, values).
void shuffle_tail(std::vector<trace::SeqItem>& out, size_t base, int64_t r, int64_t n);

// The line a refusal adds when the values sorted fit no model either, from
// the refusal of the sorted values (`sorted_refusal`): its reason and samples.
std::string not_permutation(std::string_view sorted_refusal);

}  // namespace mpior::extrap
