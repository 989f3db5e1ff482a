// The one way preload/ (with preload/piggyback/) sees MPI. The tracer is built once per
// MPI (libmpior.so for MPICH, libmpior-openmpi.so for Open MPI) from the same
// sources, and the two ABIs differ: MPICH's handles are integers, Open MPI's
// are pointers to objects in libmpi.so (MPI_COMM_WORLD is
// &ompi_mpi_comm_world), constants and MPI_Status differ too. So the code
// only uses handles through their MPI_* names and these helpers, never as
// numbers, and reads statuses by their standard fields.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <type_traits>

// Weak references to the header's extern objects (generated per MPI from
// its preprocessed mpi.h): the library also loads into programs without MPI.
#include "preload/mpi_weak.hpp"

namespace mpior::preload::mpi {

#if defined(OPEN_MPI)
inline constexpr const char* kMpiName = "Open MPI";
inline constexpr const char* kLibName = "libmpior-openmpi.so";
inline constexpr const char* kOtherMpiName = "MPICH";
inline constexpr const char* kOtherLibName = "libmpior.so";
inline constexpr const char* kOtherMpiKey = "mpich";  // MPIOR_MPI's value for the other MPI
#elif defined(MPICH)
inline constexpr const char* kMpiName = "MPICH";
inline constexpr const char* kLibName = "libmpior.so";
inline constexpr const char* kOtherMpiName = "Open MPI";
inline constexpr const char* kOtherLibName = "libmpior-openmpi.so";
inline constexpr const char* kOtherMpiKey = "openmpi";
#else
#error "mpior is built for MPICH or Open MPI"
#endif

// A handle as a number (tables keyed by numbers), and back.
template <typename Handle>
inline uint64_t handle_key(Handle h) {
  if constexpr (std::is_pointer_v<Handle>)
    return uint64_t(reinterpret_cast<uintptr_t>(h));
  else
    return uint64_t(uint32_t(h));
}
template <typename Handle>
inline Handle handle_of(uint64_t key) {
  if constexpr (std::is_pointer_v<Handle>)
    return reinterpret_cast<Handle>(uintptr_t(key));
  else
    return Handle(uint32_t(key));
}

// Bytes a completed receive's status reports: what MPI_Get_elements_x(st,
// MPI_BYTE) answers, read from the status itself. Both MPIs keep the
// received size in bytes there (MPICH: count_lo, and count_hi_and_cancelled
// above its cancel bit; Open MPI: _ucount); the call into MPI cost a third
// of the tracer's instructions per received message (issue 11's latency).
inline int64_t status_byte_count(const MPI_Status& st) {
#if defined(OPEN_MPI)
  return int64_t(st._ucount);
#else
  return int64_t((uint64_t(uint32_t(st.count_hi_and_cancelled)) >> 1) << 32 | uint32_t(st.count_lo));
#endif
}

}  // namespace mpior::preload::mpi
