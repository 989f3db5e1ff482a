// The tracer and the program's MPI must match (mpi_pairing.cpp).
#pragma once

namespace mpior::preload::mpi {

// Whether the process has the other MPI's library (the one this build of
// the tracer is not for).
bool other_mpi_loaded() noexcept;
// Says so on stderr (first rank only) and runs the program again, from the
// start, without this library in LD_PRELOAD. Does not return.
[[noreturn]] void run_untraced(char** argv, char** envp) noexcept;

}  // namespace mpior::preload::mpi
