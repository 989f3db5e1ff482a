// A cb_nodes what-if for the threaded replay (mpior-post --extrapolate N
// --cb-nodes K): the replay re-runs the POSIX reads and writes ROMIO's
// two-phase I/O made under each collective MPI-IO read or write, on the
// ranks that made them. With other hints ROMIO would have made other ones,
// on other ranks; this deals them again as ROMIO places them
// (postproc/romio_layout.hpp): the call's bytes, first to last byte the
// ranks requested, in one file domain per aggregator, each moved in
// cb_buffer_size windows from its first requested byte, one request a
// window that holds any, whole; a written window with a hole is read first
// (read-modify-write). Without the ranks' offsets, the windows hold the
// bytes moved when traced.
//
// Each rank's request comes from its MPI-IO call (the byte offset the tracer
// recorded and the call's bytes, through the rank's view): ROMIO's choice
// between two-phase and independent I/O (romio_cb_read/romio_cb_write) and
// its file domains' range follow from them. A call moved independently
// is moved by each rank as ROMIO moves an independent call (below). _ordered
// calls are left as traced: ROMIO moves them independently. A call whose
// offsets were not recorded (a shared pointer not seen) is dealt two-phase,
// over the bytes moved when traced.
//
// With sieving hints, independent reads and writes at a known offset
// through a non-contiguous view are made again as ROMIO makes them
// (postproc/romio_sieve.hpp: data sieving buffers, or one transfer a
// piece); so are the collective calls moved independently (with ROMIO's
// default sieving hints when none are given). A sieving read of an
// independent call finds the file as long as the plan's furthest write on
// it (in a real run it finds what the racing ranks have written). ROMIO's
// fcntl locks around sieving writes stay as traced.
#pragma once

#include <cstdint>
#include <optional>

#include "postproc/ompio_layout.hpp"
#include "postproc/romio_layout.hpp"
#include "postproc/romio_sieve.hpp"
#include "trace/model.hpp"

namespace mpior::postproc {

// Which calls are dealt again: collective ones with `collective`,
// independent strided ones with `sieve`.
// With `ompio` (a job traced under Open MPI's OMPIO), collective calls
// are dealt by OMPIO's rules (postproc/ompio_layout.hpp) instead:
// cb_nodes and cb_buffer_size as OMPIO reads those hints (cb_nodes as
// io_ompio_num_aggregators), the other collective hints unused.
// With `requests_only` (an extrapolated OMPIO job whose nested transfers
// were left out, extrap/collective_io.hpp), every collective call is dealt
// from its ranks' requests, its transfers taking the given time a byte;
// cb_nodes -1 leaves the count to OMPIO.
struct RequestRate {
  double write_ns_per_byte = 0, read_ns_per_byte = 0;
};
struct MpiioHints {
  std::optional<CollectiveHints> collective;
  std::optional<SieveHints> sieve;
  bool ompio = false;
  OmpioFcoll ompio_fcoll = OmpioFcoll::automatic;  // with ompio: the collective component
  std::optional<RequestRate> requests_only;
};

struct Redealt {
  uint64_t calls = 0;        // collective reads and writes whose nested transfers were dealt again
  uint64_t independent = 0;  // of them, moved by each rank alone (not two-phase with these hints)
  uint64_t strided = 0;      // independent calls through a non-contiguous view made again
  uint64_t transfers = 0;    // POSIX reads and writes they now make, over all ranks
  int32_t aggregators = 0;   // most ranks moving data for one call
};

// Rewrites the plan's streams (rank by rank, then merged again). The nested
// POSIX reads and writes under collective calls are replaced (the data
// sieving reads of a traced write's hole go too). The ranks' nodes are the
// plan's host names. Throws ToolError for hints check_hints refuses, for a
// component asked of a job not traced under OMPIO, and when
// an aggregator never opened the file at the POSIX level (no descriptor).
Redealt redeal_mpiio(trace::Plan& plan, const MpiioHints& hints);
inline Redealt redeal_collective_io(trace::Plan& plan, const CollectiveHints& hints) {
  return redeal_mpiio(plan, {hints, std::nullopt, false, OmpioFcoll::automatic, std::nullopt});
}

}  // namespace mpior::postproc
