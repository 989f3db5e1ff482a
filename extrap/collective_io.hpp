// Collective MPI-IO under Open MPI's OMPIO. OMPIO picks its collective
// component and its aggregator count from the rank count (individual on two
// ranks or fewer, vulcan above; a count from a cost model capped at ranks /
// 8), so the POSIX transfers nested in a collective read or write change
// with n in ways no model of the traced counts fits: a pwrite per rank at 2
// ranks, one aggregator's pwritev calls at 3, more aggregators at thousands.
// The nested calls leave every input's streams (their time stays in the
// MPI-IO call's duration), and mpior-post deals the target's calls again as
// OMPIO deals them at the target's count (postproc/aggregators.hpp), each
// transfer taking the inputs' time a byte.
#pragma once

#include <string>
#include <vector>

#include "extrap/stream_classes.hpp"

namespace mpior::extrap {

struct CollectiveIo {
  bool dropped = false;  // the nested calls were left out: deal them again
  double write_ns_per_byte = 0, read_ns_per_byte = 0;
};

// Leaves out the calls nested in collective reads and writes when every
// input ran under OMPIO; one warning when it did.
std::vector<std::string> align_collective_io(std::vector<Input>& inputs, CollectiveIo& out);

}  // namespace mpior::extrap
