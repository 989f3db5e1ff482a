// Open MPI 4.1's own MPI-IO component, OMPIO, on a file system other than
// Lustre: which ranks aggregate a collective read or write and the POSIX
// transfers they make (the counterpart of postproc/romio_layout.hpp for a
// job traced under Open MPI with OMPIO; Open MPI v4.1.x's code).
//
// Aggregators (common_ompio_file_view.c, common_ompio_aggregators.c): a
// cb_nodes hint or io_ompio_num_aggregators forces their count (at most the
// ranks); otherwise the default grouping (io_ompio_grouping_option 5,
// simple) picks it from a LogGP cost model of the exchange over the
// average contiguous chunk of the ranks' views (mca_common_ompio_simple_
// grouping), capped at ranks / io_ompio_max_aggregators_ratio (8), at
// least one. The ranks are dealt in that many groups of consecutive ranks,
// the first ranks % count groups one rank larger; each group's first rank
// aggregates (mapping by slot, Open MPI's default).
//
// Collective component (fcoll, the highest priority of those a file's
// query admits, fcoll_base_file_select.c): on two ranks or fewer,
// individual (priority 100); otherwise vulcan (50 off Lustre). A run given
// `--mca fcoll NAME` uses that one (dynamic and two_phase, priority 10,
// only so).
//
// Individual (fcoll_individual_file_{write,read}_all.c): each rank moves its
// own request as an independent call does (common_ompio_file_{write,read}):
// its pieces in view order, io_ompio_cycle_buffer_size (512 MiB) a cycle,
// a cycle's pieces one fbtl call. Its writes are never sieved (fbtl posix
// sieves writes only under a collective component's flag), its reads are.
//
// Vulcan writes (fcoll_vulcan_file_write_all.c): the range from the ranks'
// lowest first byte to their highest last byte (a rank with nothing to
// write counts as [0, 0)) is cut in domains of ceil(range / count) bytes
// from offset 0, domain d going to aggregator d mod count. Each aggregator
// takes the bytes of its domains in offset order, cb_buffer_size / 2 bytes
// a cycle, pieces split across cycles; a cycle's bytes, adjacent ones
// joined, are one fbtl call. Vulcan reads (fcoll_vulcan_file_read_all.c):
// each group's aggregator reads its own group's bytes in offset order,
// cb_buffer_size bytes a cycle.
//
// Dynamic_gen2 writes (fcoll_dynamic_gen2_file_write_all.c; its reads are
// vulcan's): io_ompio_num_aggregators aggregators (else the file's stripe
// count, 1 off Lustre; a cb_nodes hint alone does not set it), at most the
// ranks, the i-th rank i * ranks / count. Each rank's pieces are cut at
// stripes (the file's striping unit, 64 KiB off Lustre), stripe k going to
// aggregator k mod count; each aggregator takes its bytes in offset order,
// cb_buffer_size / 2 bytes a cycle as vulcan does, and writes a cycle one
// stripe at a time: each stripe's entries one synchronous fbtl call.
//
// Dynamic writes (fcoll_dynamic_file_write_all.c; its reads are vulcan's,
// the same code): each group's aggregator takes its group's bytes in offset
// order, cb_buffer_size bytes a cycle, a cycle's bytes (adjacent ones
// joined) one synchronous fbtl call, never sieved (the component does not
// raise fbtl posix's collective flag).
//
// Two_phase (fcoll_two_phase_file_{write,read}_all.c, ROMIO's two-phase
// I/O ported): as many aggregators as io_ompio_num_aggregators (else the
// grouping's count), the i-th rank i * ranks / count; the range from the
// ranks' lowest first byte to their highest last byte in domains of
// ceil(range / count) bytes, the i-th to the i-th aggregator; each moves
// its domain's requested bytes in cb_buffer_size windows from the first
// byte requested in it to the last, a window holding any requested byte
// one pread or pwrite of the whole window; a written window with a hole is
// read first (one pread).
//
// fbtl posix: a call of one entry is one pread or pwrite; of several, data
// sieving when their average length is at most 1 MiB and the average
// distance between their starts ((last start - first start) / entries) is
// above 0 and at most 4 KiB: the span read (a write then written back
// whole) in pieces of at most 64 MiB; otherwise one preadv or pwritev an
// entry. A vulcan write of more than two cycles goes through asynchronous
// I/O (fbtl posix ipwritev): each cycle's entries are aio_write requests,
// never sieved, at most 2,048 in flight (a batch is waited for, aio_error
// then aio_return per request in order, before the next is submitted), and a
// cycle's requests are waited for before the next cycle's are submitted.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "postproc/romio_layout.hpp"
#include "postproc/romio_sieve.hpp"

namespace mpior::postproc {

// The collective components modelled; automatic: OMPIO's choice.
enum class OmpioFcoll { automatic, individual, vulcan, dynamic, dynamic_gen2, two_phase };
// "automatic" or a component's name; throws ToolError otherwise.
OmpioFcoll parse_ompio_fcoll(std::string_view name);
const char* ompio_fcoll_name(OmpioFcoll f);

struct OmpioHints {
  int num_aggregators = -1;          // cb_nodes or io_ompio_num_aggregators; -1: OMPIO's choice
  int64_t bytes_per_agg = 32 << 20;  // cb_buffer_size or io_ompio_bytes_per_agg
  OmpioFcoll fcoll = OmpioFcoll::automatic;
};

// The component that moves a collective call of `ranks` ranks.
OmpioFcoll ompio_fcoll_of(int ranks, OmpioFcoll asked);

// The striping unit dynamic_gen2 cuts by off Lustre.
constexpr int64_t kOmpioGen2StripeSize = 64 << 10;

// The ranks (positions in the communicator) of dynamic_gen2's or
// two_phase's `count` aggregators among `ranks`.
std::vector<int32_t> ompio_spread_aggregators(int ranks, int count);

// The transfers of each of them (out[i], the i-th) for a dynamic_gen2
// write of `pieces[r]` on a file of `file_end` bytes before the call.
std::vector<std::vector<PosixTransfer>> ompio_gen2_writes(const std::vector<std::vector<ByteRange>>& pieces, int count,
                                                          int64_t bytes_per_agg, int64_t stripe_size, int64_t file_end);

// OMPIO's default count for `ranks` ranks whose views' contiguous chunks
// average `chunk` bytes (1-D model when that is the average view size,
// `view_size`, else 2-D).
int ompio_default_aggregator_count(int ranks, int64_t chunk, int64_t view_size, int64_t bytes_per_agg);

// The count the hints give (forced, capped at the ranks) or OMPIO's default.
int ompio_aggregator_count(int ranks, int64_t chunk, int64_t view_size, const OmpioHints& h);

// Each group's ranks (positions in the communicator), `count` groups.
std::vector<std::vector<int32_t>> ompio_groups(int ranks, int count);

// The transfers of each aggregator (out[j], the j-th group's first rank)
// for a vulcan write of `pieces[r]` (rank r's file pieces in view order,
// adjacent ones joined) on a file of `file_end` bytes before the call.
std::vector<std::vector<PosixTransfer>> ompio_writes(const std::vector<std::vector<ByteRange>>& pieces, int count,
                                                     int64_t bytes_per_agg, int64_t file_end);

// The same for a vulcan (or dynamic) read, the file `file_end` bytes long.
std::vector<std::vector<PosixTransfer>> ompio_reads(const std::vector<std::vector<ByteRange>>& pieces, int count,
                                                    int64_t bytes_per_agg, int64_t file_end);

// The same for a dynamic write.
std::vector<std::vector<PosixTransfer>> ompio_dynamic_writes(const std::vector<std::vector<ByteRange>>& pieces,
                                                             int count, int64_t bytes_per_agg, int64_t file_end);

// The transfers of each two_phase aggregator (out[i], the i-th of
// ompio_spread_aggregators) for a read or write of `pieces[r]`.
std::vector<std::vector<PosixTransfer>> ompio_two_phase(const std::vector<std::vector<ByteRange>>& pieces, int count,
                                                        int64_t bytes_per_agg, bool read, int64_t file_end);

// A collective call dealt by a component other than individual: the
// aggregators (positions among the call's ranks) and each one's transfers.
struct OmpioDealt {
  std::vector<int32_t> movers;
  std::vector<std::vector<PosixTransfer>> transfers;
};
// `count` aggregators (striping_factor above 1 replaces it for a
// dynamic_gen2 write: a Lustre file's stripe count); `striping_unit`:
// dynamic_gen2's stripe, OMPIO's 64 KiB when 0.
OmpioDealt ompio_collective(const std::vector<std::vector<ByteRange>>& pieces, bool read, OmpioFcoll fcoll, int count,
                            int64_t bytes_per_agg, int64_t striping_unit, int striping_factor, int64_t file_end);

// The transfers of one rank's request under fcoll individual: `pieces` in
// view order, adjacent ones joined, on a file of `file_end` bytes.
std::vector<PosixTransfer> ompio_individual(const std::vector<ByteRange>& pieces, bool read, int64_t file_end);

// One fbtl posix call's transfers for `entries` (sorted, disjoint, not
// adjacent); `sieve`: sieving allowed (synchronous calls).
std::vector<PosixTransfer> ompio_fbtl(const std::vector<ByteRange>& entries, bool read, bool sieve, int64_t file_end);

// One asynchronous fbtl posix call's AIO requests for `entries`, one an
// entry, each batch's last marked waited.
std::vector<PosixTransfer> ompio_aio(const std::vector<ByteRange>& entries, bool read);

}  // namespace mpior::postproc
