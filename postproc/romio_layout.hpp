// Which ranks ROMIO's two-phase collective I/O makes aggregators and which
// part of the file each one reads or writes (ROMIO's common code, used by
// its UFS, NFS and generic drivers; the Lustre driver's own round-robin
// of stripes over aggregators is not modelled).
//
// Aggregators (ADIOI_cb_config_list_parse): cb_config_list "*:*" takes the
// communicator's first cb_nodes ranks whatever their node; "*:m" walks the
// ranks in order and, at each node not yet visited, takes its m lowest
// ranks (the default "*:1": the lowest rank of each node), until cb_nodes
// are taken. The j-th of that list serves the j-th file domain.
//
// File domains (ADIOI_Calc_file_domains): the range from the first to the
// last byte the call accesses, split into cb_nodes domains of equal size,
// rounded up; with a striping_unit hint each inner boundary moves to the
// nearest multiple of the stripe (file lock boundaries), so a domain can
// end up empty. An aggregator moves its domain in cb_buffer_size windows
// from the first byte accessed in it (ADIOI_Exch_and_write,
// ADIOI_Read_and_exch). Not modelled: romio_min_fdomain_size (domains are
// never widened), named hosts in cb_config_list, ROMIO's other
// aggregation methods (romio_cb_pfr, romio_write_aggmethod).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mpior::postproc {

// The MPI-IO hints that place collective I/O, as ROMIO reads them.
struct CollectiveHints {
  int cb_nodes = 1;
  int64_t cb_buffer_size = 16 << 20;
  std::string cb_config_list = "*:1";  // only wildcard forms: "*:*" or "*:m"
  int64_t striping_unit = 0;           // 0: domains not aligned
};

// Throws ToolError naming what is wrong (a named host in cb_config_list,
// a count below one); "*" alone is "*:1", as in ROMIO.
void check_hints(const CollectiveHints& h);

// The aggregators of a call: `ranks` are its members in communicator order,
// `hosts[i]` the node of ranks[i].
std::vector<int32_t> aggregator_ranks(const std::vector<int32_t>& ranks, const std::vector<std::string>& hosts,
                                      const CollectiveHints& h);

using ByteRange = std::pair<int64_t, int64_t>;  // [begin, end)

// The domains of `count` aggregators over the bytes [lo, hi); an empty one
// is {x, x}.
std::vector<ByteRange> file_domains(int64_t lo, int64_t hi, int count, int64_t striping_unit);

}  // namespace mpior::postproc
