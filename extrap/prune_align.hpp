// Online pruning keeps an MPI call site by a timing rule (MPIOR_PRUNE_GAP_US:
// a site that followed long computations twice), which ranks that share
// CPUs do not meet: HDF5's Allreduce between collective writes is kept at 2
// ranks on 2 CPUs and pruned at 3 and more. Before the inputs' streams are
// matched, an MPI call site some inputs kept and every other input pruned
// entirely is pruned everywhere: its calls leave the streams (each rebuilt
// without them, their time the next call's gap, as the tracer counts a
// pruned call's) and join the input's pruned tallies.
#pragma once

#include <string>
#include <vector>

#include "extrap/stream_classes.hpp"

namespace mpior::extrap {

// One text per call site it pruned (for a warning).
std::vector<std::string> align_pruning(std::vector<Input>& inputs);

}  // namespace mpior::extrap
