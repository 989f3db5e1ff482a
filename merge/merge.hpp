// Cross-rank merge of the plan's streams (scalaioextrap §II, inter-node
// compression): streams of one thread index whose compressed structure is
// equal merge into one stream with a rank list, their differing parameters
// becoming rank variants (merge_params.hpp). Works on the compressed trees
// only: cost follows the streams' compressed sizes, never their iterations.
#pragma once

#include <cstddef>
#include <vector>

#include "trace/model.hpp"

namespace mpior::merge {

// Two streams merge when they have the same thread index and lossless flag,
// the same tree (loops and spans, leaf by leaf kind, depth, flags and call
// site). Iteration counts and every Param may differ.
bool same_structure(const trace::Stream& a, const trace::Stream& b);

// streams: each for one rank (rank list of one rank, no rank variants), as
// build_plan collects them. Returns the merged streams, in order of each
// group's first stream; a stream that matches no other, stands for several
// ranks already or has rank variants is returned unchanged. Within a group
// ranks must ascend: a stream whose rank is not above the group's last rank
// starts a group of its own rather than break that order.
std::vector<trace::Stream> merge_streams(std::vector<trace::Stream> streams);

// The same for streams that may stand for several ranks already (with rank
// variants): one step of a tree reduction (merge_tree.hpp). A group's
// members must have disjoint rank lists, each starting above the previous
// member's last rank. Up to expand_ranks ranks, every rank's values are
// merged again (ParamMerger finds affine and strided variants); beyond, the
// members' variants join when equal (values in rank-0 form and scale), so
// the cost follows the variants and rank lists. Either way each rank reads
// back what its own stream read.
std::vector<trace::Stream> merge_merged(std::vector<trace::Stream> streams, size_t expand_ranks = 256);

}  // namespace mpior::merge
