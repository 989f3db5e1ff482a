// The POSIX reads and writes ROMIO makes for one rank's request that is not
// contiguous in the file (ADIOI_GEN_ReadStrided, ADIOI_GEN_WriteStrided, used
// by its UFS, NFS and generic drivers for independent calls, and for
// collective ones it does not move two-phase).
//
// Data sieving (romio_ds_read / romio_ds_write "automatic", ROMIO's default,
// or "enable"): a read fills a buffer of ind_rd_buffer_size bytes from the
// first piece it does not hold, whole (to the request's last byte at most);
// a piece running past the buffer's end keeps its head and reads on from
// the buffer's end. A write reads a buffer of ind_wr_buffer_size bytes from
// the first piece it does not hold, copies the pieces in, and writes the
// buffer back whole when the next piece lies past it (read-modify-write,
// under a lock on the request's range). With "disable" each piece is one
// transfer (ADIOI_GEN_*Strided_naive). A request inside one piece is one
// transfer either way.
//
// Each read is ADIOI_GEN_ReadContig's loop: a read that comes back short at
// the end of the file asks again for the rest and gets 0.
#pragma once

#include <cstdint>
#include <vector>

#include "postproc/romio_layout.hpp"

namespace mpior::postproc {

// The hints that shape independent non-contiguous I/O, as ROMIO reads them.
struct SieveHints {
  CbMode ds_read = CbMode::automatic, ds_write = CbMode::automatic;  // romio_ds_read, romio_ds_write
  int64_t ind_rd_buffer_size = 4 << 20;
  int64_t ind_wr_buffer_size = 512 << 10;
  bool operator==(const SieveHints&) const = default;
};

// Throws ToolError for a buffer size below one byte.
void check_sieve_hints(const SieveHints& h);

// A transfer ROMIO makes: [begin, end), which way, and the bytes it returns
// (a read finds what the file holds).
struct PosixTransfer {
  int64_t begin = 0, end = 0;
  bool read = false;
  int64_t ret = 0;
  bool vectored = false;  // one entry of a preadv/pwritev call (OMPIO's fbtl posix)
  bool async = false;     // a POSIX AIO request (OMPIO's fbtl posix ipwritev: aio_write)
  bool waited = false;    // async: the last request of its batch, whose requests are waited for after it
  bool operator==(const PosixTransfer&) const = default;
};

// ADIOI_GEN_ReadContig of [begin, end) on a file of `file_end` bytes: one
// read, and a second one returning 0 after a short one.
void add_read(std::vector<PosixTransfer>& out, int64_t begin, int64_t end, int64_t file_end);

// The transfers of one request whose file pieces are `pieces` (in the
// order the view walks them, adjacent ones joined), on a file of
// `file_end` bytes before the call.
std::vector<PosixTransfer> strided_transfers(const std::vector<ByteRange>& pieces, bool read, const SieveHints& h,
                                             int64_t file_end);

// One aggregator's transfers over its domain `dom` from the ranks' requests
// (`req`: sorted, adjacent ones joined) as ROMIO's two-phase I/O makes them
// (ADIOI_Exch_and_write, ADIOI_Read_and_exch; OMPIO's two_phase is a port):
// `cb` windows from the first byte requested in the domain to its last,
// each one a transfer in which any byte is requested, moved whole; a
// write's window with a hole is read first (read-modify-write), finding
// what the file held up to `file_end`. `reread_short`: a short read of a
// hole is followed by a second one returning 0 (ADIOI_GEN_ReadContig;
// OMPIO's fbtl reads once). Appends to `out`.
void window_transfers(const std::vector<ByteRange>& req, ByteRange dom, int64_t cb, bool read, int64_t file_end,
                      bool reread_short, std::vector<PosixTransfer>& out);

}  // namespace mpior::postproc
