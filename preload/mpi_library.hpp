// Which MPI the job ran on, for its job record (trace::JobInfo): the
// library's own words, and the MPI-IO layer its files went through, which
// decides how mpior-post deals collective I/O again for other hints (ROMIO's
// or OMPIO's rules).
#pragma once

#include <string>

namespace mpior::preload::mpi {

// MPI_Get_library_version's first line; "" when MPI is not loaded.
std::string library_version();

// "romio" under MPICH; under Open MPI "ompio" once a file was opened through
// its OMPIO component on this rank, else "" (its romio321 component, or no
// file yet).
const char* io_layer() noexcept;

// Called by the hook on OMPIO's file open (ompio_capture.cpp).
void note_ompio_open() noexcept;

}  // namespace mpior::preload::mpi
