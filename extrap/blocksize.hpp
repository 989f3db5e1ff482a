// The max-blocksize rule (scalaioextrap §III-C): under collective buffering an
// aggregator issues the POSIX requests of a collective MPI-IO call; at a
// larger rank count their size grows with n, but ROMIO never writes more
// than its collective buffer (cb_buffer_size, 16 MiB by default) at once.
// A POSIX read or write nested under a collective MPI-IO read or write whose
// extrapolated size exceeds the buffer becomes a loop of buffer-sized
// requests (the last one the remainder), at consecutive offsets.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/model.hpp"

namespace mpior::extrap {

inline constexpr int64_t kDefaultCbBufferSize = 16 * 1024 * 1024;  // ROMIO's cb_buffer_size

// Positions of s that the rule applies to: POSIX reads and writes whose
// parent (the enclosing call) is a collective MPI-IO read or write.
std::vector<uint32_t> collective_requests(const trace::Stream& s);

// Splits every occurrence of leaf `leaf` whose count exceeds cb, for every
// rank of s, and inserts the loop node that repeats it. Returns the number of
// requests the largest occurrence became (1: nothing to split).
uint64_t split_requests(trace::Stream& s, uint32_t leaf, int64_t cb);

}  // namespace mpior::extrap
