// Decisions carried inside the application's own collective (issue 11), so
// the collective needs no exchange of its own on the shadow:
//   Allreduce   one extra element, reduced by the application's own
//               operation; its encoding makes the result say whether any
//               member logged (SUM/MAX/LOR/BOR of 0 or 1: non-zero; MIN/
//               LAND/BAND of 1 or 0: zero);
//   Bcast       one extra byte after the payload: the root's decision.
// Only small payloads (kInlineMax bytes) and, for Allreduce, predefined
// integer and floating types with predefined operations: what every member
// decides from the call's arguments alone (equal on all members), so all
// take the same path. Larger or other calls keep the shadow exchange.
#pragma once

#include <cstddef>
#include <cstdint>

#include "preload/mpi_abi.hpp"

namespace mpior::piggyback {

inline constexpr size_t kInlineMax = 1024;

// How the extra element of an Allreduce is written and read.
struct FlagCodec {
  uint8_t type = 0;        // an element type (inline_decision.cpp)
  uint8_t size = 0;        // its size in bytes
  bool zero_logs = false;  // MIN, LAND, BAND: the result is 0 when some member logged
};

// False when (t, op) is not carried inline.
bool codec_for(MPI_Datatype t, MPI_Op op, FlagCodec* codec);
void encode_flag(const FlagCodec& codec, void* element, bool log);
bool decode_flag(const FlagCodec& codec, const void* element);

// An Allreduce of count elements of t with op, with the decision `mine` as
// one more element (codec from codec_for): the application's values go in
// and come out as MPI_Allreduce would have them. *log: whether any member
// logged. count * size must be at most kInlineMax.
int allreduce_with_flag(const FlagCodec& codec, const void* sendbuf, void* recvbuf, int count, MPI_Datatype t,
                        MPI_Op op, MPI_Comm comm, bool mine, bool* log);

// A Bcast of `bytes` bytes (count elements of t) with the root's decision as
// one more byte: packed when t is not contiguous. *log: the root's decision
// (`mine` at the root).
int bcast_with_flag(void* buffer, int count, MPI_Datatype t, int64_t bytes, int root, bool am_root, MPI_Comm comm,
                    bool mine, bool* log);

}  // namespace mpior::piggyback
