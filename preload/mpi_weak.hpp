// Weak references to the objects declared by the mpi.h compiled in
// (preload/meson.build: generated per MPI).
#pragma once

#include <mpi.h>

#if defined(OPEN_MPI)
#include "preload/openmpi_mpi_weak.hpp"
#else
#include "preload/mpich_mpi_weak.hpp"
#endif
