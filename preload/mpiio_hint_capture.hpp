// The MPI-IO hints files ran with (trace::MpiioHintSet), for the job record:
// read back with MPI_File_get_info after each call that can change them
// (open, set_view and set_info with an info), kept when they differ from the
// set last kept for the file. mpior-post takes them as the defaults of its
// collective I/O models.
#pragma once

#include <cstdint>
#include <vector>

#include "preload/mpi_abi.hpp"
#include "trace/model.hpp"

namespace mpior::preload::mpi {

// After a successful call on fh (file: its file table index; given: the
// info the program passed, MPI_INFO_NULL for none). Set_view and set_info
// without an info change nothing and are not looked at.
void note_hints(MPI_File fh, int32_t file, MPI_Info given) noexcept;
// The handle is gone: its hints given so far are forgotten.
void forget_hints(MPI_File fh) noexcept;

struct HintSets {
  std::vector<trace::MpiioHintSet> sets;
  uint64_t dropped = 0;
};
// The sets kept on this rank, paths resolved.
HintSets hint_sets();

// Under OMPIO: the fcoll component forced through the MCA parameter, or "".
const char* forced_fcoll() noexcept;

}  // namespace mpior::preload::mpi
