// The post-processing pass: resolves communicators and files, then walks every
// rank's events once (in its MPI order) to pair messages, check collective
// instances and total the summary.
#pragma once

#include <string>
#include <vector>

#include "postproc/collectives.hpp"
#include "postproc/comms.hpp"
#include "postproc/pairing.hpp"
#include "postproc/plan_files.hpp"
#include "postproc/summary.hpp"
#include "postproc/trace_set.hpp"

namespace mpior::postproc {

struct Analysis {
  CommResolution comms;
  FileResolution files;
  PairingStats messages;
  CollectiveStats collectives;
  Summary summary;
  std::vector<std::string> warnings;  // the trace set's, then unreceived sends
  // Why the ranks' MPI calls do not match, in a job that did not end (an
  // MPI_Abort, a killed rank: the others stopped wherever they were); the
  // summary and reports hold, a replay plan cannot.
  std::string unmatched;
};

// Throws ToolError for anything that would make the plan wrong or the replay
// hang (in a job that did not end, a mismatch of collectives or messages is
// left in Analysis::unmatched instead). With a sink, every message pair is handed to it.
Analysis analyze(const TraceSet& set, PairSink sink = {});

}  // namespace mpior::postproc
