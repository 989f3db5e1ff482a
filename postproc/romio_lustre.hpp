// ROMIO's Lustre driver for collective writes (ad_lustre, used when the
// file is declared Lustre with the striping_unit and striping_factor
// hints). Only writes: its collective reads are ROMIO's generic two-phase
// (postproc/romio_layout.hpp).
//
// Aggregators (ADIOI_LUSTRE_Get_striping_info): with cb_nodes at least the
// striping factor, factor * min(cb_nodes / factor, romio_lustre_co_ratio);
// else the largest divisor of the factor not above cb_nodes, as ROMIO's
// divisor search finds it. They take the first entries of the
// cb_config_list's ranks, and stripe k goes to the (k mod count)-th
// (ADIOI_LUSTRE_Calc_aggregator).
//
// Two-phase or not (ADIOI_LUSTRE_WriteStridedColl): with romio_cb_write
// automatic, when the requests interleave, else unless
// romio_lustre_coll_threshold is above 0 and the ranks' contiguous pieces
// average more bytes than it (ADIOI_LUSTRE_Docollect: all bytes over all
// pieces, an integer division); its default, 0, makes every call
// two-phase. A call not two-phase is written by each rank alone.
//
// Writes (ADIOI_LUSTRE_Exch_and_write): each aggregator moves one stripe a
// step, from the first byte it is sent in the stripe up to the stripe's end
// or its last byte in the call, whichever comes first. With a hole in that
// range, romio_lustre_ds_in_coll enable (the default) reads the range first
// and writes it whole; disable writes each contiguous run alone.
#pragma once

#include <cstdint>
#include <vector>

#include "postproc/romio_layout.hpp"
#include "postproc/romio_sieve.hpp"

namespace mpior::postproc {

// Both striping hints at least 1 (check_hints); the others ROMIO's defaults
// unless set.
struct LustreHints {
  int64_t striping_unit = 1;
  int striping_factor = 1;
  int co_ratio = 1;        // romio_lustre_co_ratio
  bool ds_in_coll = true;  // romio_lustre_ds_in_coll
};

// How many of the cb_nodes aggregators write (ROMIO's avail_cb_nodes).
int lustre_aggregator_count(int cb_nodes, const LustreHints& h);

// Whether ROMIO's Lustre driver writes a call whose requests do not
// interleave two-phase: `bytes` over `pieces` contiguous pieces, all ranks.
bool lustre_docollect(int64_t bytes, int64_t pieces, int64_t coll_threshold);

// The aggregator (0 .. count - 1) that writes the byte at `offset`.
int lustre_aggregator_of(int64_t offset, int64_t striping_unit, int count);

// The transfers of aggregator j (out[j]) for a collective write of the
// bytes `requested` (sorted, disjoint, adjacent ones joined) over `count`
// aggregators, on a file of `file_end` bytes before the call.
std::vector<std::vector<PosixTransfer>> lustre_writes(const std::vector<ByteRange>& requested, int count,
                                                      const LustreHints& h, int64_t file_end);

}  // namespace mpior::postproc
