// Rank variants (scalaioextrap §II, inter-node compression): the values one
// Param took on each rank of a merged stream become <value sequence, rank
// list> pairs, as few as the search below finds. Ranks with identical values
// share a variant; ranks whose values are the same sequence shifted by
// scale × rank share one too (file_<rank> ids, rank × block offsets, stencil
// peers), stored as it would be for rank 0.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "trace/model.hpp"

namespace mpior::merge {

struct RankValues {
  int32_t rank = 0;
  std::span<const trace::SeqItem> seq;  // never empty (see canonical_seq)
};

// p's values in s, in the form merge_param compares: "always 0" (an empty
// sequence) reads as the one scalar 0, which the cursor expands the same way.
std::span<const trace::SeqItem> canonical_seq(const trace::Stream& s, const trace::Param& p);

// Builds the Params of one merged stream in it: stores the values of each
// Param over the stream's ranks (ascending, distinct, each with the values of
// its own unmerged stream) and returns the Param that reads them back: a plain
// sequence when every rank has the same values (no variant), otherwise a new
// entry of out.ranked covering every rank. Equal rank lists are stored once.
class ParamMerger {
 public:
  explicit ParamMerger(trace::Stream& out) : out_(out) {}
  trace::Param merge(std::span<const RankValues> ranks);

 private:
  trace::SeqRef rank_list(std::span<const RankValues> ranks, const std::vector<size_t>& members);
  trace::Stream& out_;
  std::unordered_map<uint64_t, std::vector<trace::SeqRef>> rank_lists_;  // by hash of the ranks
  std::vector<int32_t> scratch_;
};

// Ascending ranks as a folded value sequence: contiguous or strided ranks cost
// about two items whatever their number.
trace::SeqRef add_rank_list(trace::SeqArena& arena, std::span<const int32_t> ranks);

}  // namespace mpior::merge
