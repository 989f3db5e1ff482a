// Which ranks ROMIO's two-phase collective I/O makes aggregators, whether a
// call is two-phase at all, and which part of the file each aggregator
// reads or writes (ROMIO's common code, used by its UFS, NFS and generic
// drivers, and the Lustre driver's reads; its writes are in
// postproc/romio_lustre.hpp).
//
// Aggregators (ADIOI_cb_config_list_parse): cb_config_list is a comma list
// of NAME[:M] entries, NAME a host or "*", M a count, "*" (cb_nodes) or
// absent (1); "*:*" alone takes the communicator's first cb_nodes ranks
// whatever their node. A named entry takes the first M ranks on that host
// not taken yet and then retires the host; "*:M" walks the ranks in order
// and, at each host not retired, takes M of its ranks and retires it. The
// list stops at cb_nodes ranks or at its end; the j-th rank taken serves
// the j-th file domain. A list that takes no rank fails, as ROMIO's open.
//
// Two-phase or not (ADIOI_GEN_ReadStridedColl, WriteStridedColl): with
// romio_cb_read / romio_cb_write "automatic" (ROMIO's default), a call is
// two-phase only when some rank's first byte lies before the previous
// rank's last byte (ROMIO's interleave check, ranks in communicator order);
// otherwise, and always with "disable", each rank moves its own request.
//
// File domains (ADIOI_Calc_file_domains): the range from the ranks' lowest
// first byte to their highest last byte, split into cb_nodes domains of
// equal size, rounded up and at least romio_min_fdomain_size; with a
// striping_unit hint each inner boundary moves to the nearest multiple of
// the stripe (file lock boundaries), so a domain can end up empty. An
// aggregator moves its domain in cb_buffer_size windows from the first byte
// accessed in it (ADIOI_Exch_and_write, ADIOI_Read_and_exch). Not modelled:
// ROMIO's other aggregation methods (romio_cb_pfr, romio_write_aggmethod).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mpior::postproc {

// romio_cb_read / romio_cb_write.
enum class CbMode { automatic, enable, disable };
// "automatic", "enable" or "disable"; throws ToolError otherwise.
CbMode parse_cb_mode(std::string_view value, std::string_view hint);
const char* cb_mode_name(CbMode m);

// The MPI-IO hints that place collective I/O, as ROMIO reads them.
struct CollectiveHints {
  int cb_nodes = 1;
  int64_t cb_buffer_size = 16 << 20;
  std::string cb_config_list = "*:1";
  int64_t striping_unit = 0;     // 0: domains not aligned
  int64_t min_fdomain_size = 0;  // romio_min_fdomain_size
  CbMode cb_read = CbMode::automatic, cb_write = CbMode::automatic;
  // With striping_unit: the file is Lustre's, striped over this many
  // targets; collective writes go through ROMIO's Lustre driver
  // (postproc/romio_lustre.hpp). 0: ROMIO's generic driver.
  int striping_factor = 0;
  // The Lustre driver's own hints (romio_lustre_co_ratio,
  // romio_lustre_coll_threshold, romio_lustre_ds_in_coll), ROMIO's defaults.
  int lustre_co_ratio = 1;
  int64_t lustre_coll_threshold = 0;
  bool lustre_ds_in_coll = true;
};

// Throws ToolError naming what is wrong (a list ROMIO cannot parse, a count
// below one).
void check_hints(const CollectiveHints& h);

// The aggregators of a call: `ranks` are its members in communicator order,
// `hosts[i]` the node of ranks[i]. Throws ToolError when the list takes none.
std::vector<int32_t> aggregator_ranks(const std::vector<int32_t>& ranks, const std::vector<std::string>& hosts,
                                      const CollectiveHints& h);

using ByteRange = std::pair<int64_t, int64_t>;  // [begin, end)

// One rank's request in a collective call: its first and last byte (ROMIO's
// st_offsets and end_offsets; an empty request has last = first - 1).
struct Request {
  int64_t first = 0, last = -1;
};
// ROMIO's interleave check over the requests in communicator order.
bool interleaved(const std::vector<Request>& requests);

// The domains of `count` aggregators over the bytes [lo, hi); an empty one
// is {x, x}.
std::vector<ByteRange> file_domains(int64_t lo, int64_t hi, int count, int64_t striping_unit,
                                    int64_t min_fdomain_size = 0);

}  // namespace mpior::postproc
