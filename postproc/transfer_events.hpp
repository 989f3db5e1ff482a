// The records a POSIX transfer dealt to a rank (postproc/aggregators.hpp)
// becomes, nested under the MPI-IO call it serves: a pread or pwrite, an
// entry of a preadv or pwritev, or an AIO request (OMPIO's asynchronous
// writes). A request is its aio_write (or aio_read) where it starts; where
// its batch is waited for, each of the batch's requests, in order, is an
// aio_error that sees it done (its mpior_aio_done record nested) and an
// aio_return, once the batch's time has passed: the replay issues the
// requests asynchronously and waits for them there, as OMPIO does.
#pragma once

#include <cstdint>
#include <vector>

#include "postproc/restream.hpp"
#include "postproc/romio_sieve.hpp"
#include "trace/cursor.hpp"

namespace mpior::postproc {

// Where the records go: the rank's descriptor and file slot of the file,
// the call site they take, and the next free AIO request id of the rank's
// thread (advanced past the requests made).
struct TransferSite {
  int64_t fd = -1;
  int64_t file = -1;
  uint64_t callsite = 0;
  int64_t* next_aio_id = nullptr;
};

// Appends to `b` the records of `mine`, the i-th taking `dur[i]`
// nanoseconds, so that they end with `call` (or start with it, when they
// take longer). Returns the transfers made.
uint64_t insert_transfers(Restream& b, const trace::Event& call, const std::vector<PosixTransfer>& mine,
                          const std::vector<int64_t>& dur, const TransferSite& site);

}  // namespace mpior::postproc
