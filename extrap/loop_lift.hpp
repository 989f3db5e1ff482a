// A loop that runs once is folded away when a trace compresses: HDF5's rank
// 0 writes two metadata entries in a loop at 4 ranks and one, as a plain
// call, at 8 to 16 (its share of the dealt table, dealt.hpp). Before the
// inputs' streams are matched, a structure seen at one input alone, or
// only at inputs where another is not, gets the same calls of that other
// structure lifted into it: its missing loops put back, each running once,
// which replays exactly the same calls.
#pragma once

#include <vector>

#include "extrap/stream_classes.hpp"

namespace mpior::extrap {

// Rewrites, in place, the streams of a structure into the structure of one
// seen at a single input, or at other inputs only (or that one into
// theirs), where one is the other with loops taken out. Returns how many
// streams it rewrote.
size_t lift_lone_loops(std::vector<Input>& inputs);

}  // namespace mpior::extrap
