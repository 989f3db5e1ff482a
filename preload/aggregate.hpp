// The job's traces at MPI_Finalize (aggregate.cpp): the ranks send their
// encoded traces to aggregators over the tracer's private communicator; each
// aggregator writes one indexed file (trace/format_aggregate.hpp) durably, and only
// then do its ranks remove the rank files their periodic flushes left.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "preload/mpi_abi.hpp"
#include "trace/model.hpp"

namespace mpior::preload::aggregate {

// MPIOR_MERGE: on unless set to 0.
bool enabled();

struct Context {
  std::string dir;
  int rank = 0, size = 1;
  uint64_t job_id = 0;
  MPI_Comm comm = MPI_COMM_NULL;  // the tracer's private communicator
};

struct Result {
  bool written = false;                       // this rank's trace is on disk
  std::vector<trace::TraceFileRanks> layout;  // rank 0: which file holds which ranks
};

// Collective over c.comm; never throws (a failure leaves the rank files and
// logs one warning line).
Result finalize(const Context& c) noexcept;

}  // namespace mpior::preload::aggregate
