// The real-symbol table generated for the MPI whose mpi.h is compiled in
// (preload/meson.build: one generated table per MPI).
#pragma once

#include <mpi.h>

#if defined(OPEN_MPI)
#include "preload/openmpi_real_table.hpp"
#else
#include "preload/mpich_real_table.hpp"
#endif
