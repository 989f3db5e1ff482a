// Processes a traced process starts: forked children, exec'd programs
// (system(), posix_spawn, shells, `timeout`). Each inherits its parent's
// identity through MPIOR_PARENT (trace directory, job, rank, clock start) and
// writes its own trace beside the rank's, which mpior-post folds into the
// rank as extra threads starting where the child did.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace mpior::preload::lineage {

struct Parent {
  std::string dir;  // where the job's traces go
  uint64_t job_id = 0;
  int32_t rank = 0, size = 1;
  int64_t mono_ns = 0, real_ns = 0;  // the parent's trace start
  // An MPI rank, not a standalone program: a process an MPI launcher starts
  // below a standalone program (`timeout 1h mpirun ...`, a batch script) is
  // a rank of a job of its own; below a rank it is that rank's child.
  bool mpi_rank = false;
};

// The identity MPIOR_PARENT carries, when a traced process started this one.
std::optional<Parent> inherited();
// Passes this process's identity to the processes it starts. Not thread-safe
// (setenv): called at load and at MPI_Init, before the application starts any.
void announce(const Parent& p);

}  // namespace mpior::preload::lineage
