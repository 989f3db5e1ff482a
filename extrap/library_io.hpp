// The MPI library's own I/O. The calls nested in MPI_Init and MPI_Finalize
// read the library's configuration, scan its components and discover the
// node, and which of them run depends on the run, not on the program:
// Open MPI's rank 0 discovers the node's topology itself at 3 ranks and takes
// it from the launcher at 2. When those nested calls differ between the
// inputs, no input's structure can match another's. They then leave every
// input's streams (their time stays in the MPI call's duration), and the
// files only they named leave the ranks' tables.
// Nested calls that every input makes alike stay: they are the program's to
// replay.
#pragma once

#include <string>
#include <vector>

#include "extrap/stream_classes.hpp"

namespace mpior::extrap {

// One warning when the nested calls were left out, none otherwise.
std::vector<std::string> align_library_io(std::vector<Input>& inputs);

}  // namespace mpior::extrap
