// The plan's tables at the target rank count: each rank's files (names with
// rank numbers extrapolated, zero padding kept: scalaioextrap §III-B2), its
// communicators (world, self, groups of k consecutive or strided ranks, fixed
// member lists), its host, working directory and traced time.
#pragma once

#include <cstdint>
#include <vector>

#include "extrap/stream_classes.hpp"
#include "extrap/streams.hpp"
#include "trace/model.hpp"

namespace mpior::extrap {

// A rank's kind: its stream class per thread. kinds[i][r] is input i's rank
// r's kind, target[r] the target rank's (an index into the same numbering).
struct RankKinds {
  std::vector<std::vector<int32_t>> inputs;
  std::vector<int32_t> target;
  std::vector<std::string> names;  // per kind, for messages
};

// Fills out.ranks, out.files and out.comms for n = target.size() ranks.
// A file the job neither created nor wrote whose name or size no model fits
// takes the largest input's name and the best-fitting size, with a warning.
void extrapolate_tables(const StreamContext& ctx, const RankKinds& kinds, trace::Plan& out);

}  // namespace mpior::extrap
