#include "postproc/romio_sieve.hpp"

#include <catch2/catch.hpp>
#include <vector>

#include "trace/tool_error.hpp"

using namespace mpior;
using postproc::ByteRange;
using postproc::CbMode;
using postproc::PosixTransfer;
using postproc::SieveHints;
using postproc::strided_transfers;

namespace {

// Pieces of `len` bytes every `stride` bytes from `first`, `count` of them.
std::vector<ByteRange> vector_pieces(int64_t first, int64_t len, int64_t stride, int count) {
  std::vector<ByteRange> out;
  for (int i = 0; i < count; ++i) out.emplace_back(first + i * stride, first + i * stride + len);
  return out;
}

SieveHints buffers(int64_t rd, int64_t wr) {
  SieveHints h;
  h.ind_rd_buffer_size = rd, h.ind_wr_buffer_size = wr;
  return h;
}

}  // namespace

// The expectations follow ADIOI_GEN_ReadStrided's and WriteStrided's
// ADIOI_BUFFERED_READ / ADIOI_BUFFERED_WRITE by hand: pieces of 10 bytes at
// 0, 25, 50, 75 (last byte 84).
TEST_CASE("data sieving reads: whole buffers, a piece past the end read on from there", "[postproc][sieve]") {
  auto pieces = vector_pieces(0, 10, 25, 4);
  // Buffer 30: [0, 30) holds pieces 0 and 1 (25..35 runs past: head 5, read on
  // [30, 60)); 50..60 is in; 75 is past: a new buffer [75, 85).
  std::vector<PosixTransfer> want{{0, 30, true, 30}, {30, 60, true, 30}, {75, 85, true, 10}};
  CHECK(strided_transfers(pieces, true, buffers(30, 1), 1000) == want);
  // One buffer holds it all: one read to the last byte.
  CHECK(strided_transfers(pieces, true, buffers(4096, 1), 1000) == std::vector<PosixTransfer>{{0, 85, true, 85}});
  // A file of 80 bytes: the read comes back short, and the next one gets 0.
  CHECK(strided_transfers(pieces, true, buffers(4096, 1), 80) ==
        std::vector<PosixTransfer>{{0, 85, true, 80}, {80, 85, true, 0}});
}

TEST_CASE("data sieving writes: each buffer read, then written back whole", "[postproc][sieve]") {
  auto pieces = vector_pieces(0, 10, 25, 4);
  // Buffer 30: [0, 30) takes pieces 0 and the head of 1; it is written and
  // the next buffer [30, 60) read for the tail, which then takes 50..60;
  // 75 is past: [30, 60) written, [75, 85) read and written.
  std::vector<PosixTransfer> want{{0, 30, true, 30},   {0, 30, false, 30}, {30, 60, true, 30},
                                  {30, 60, false, 30}, {75, 85, true, 10}, {75, 85, false, 10}};
  CHECK(strided_transfers(pieces, false, buffers(1, 30), 1000) == want);
  // A file of 40 bytes: [30, 60) comes back short and the rest gets 0; the
  // buffers written back make it 60 long, so [75, 85) finds nothing.
  std::vector<PosixTransfer> short_file{{0, 30, true, 30},   {0, 30, false, 30}, {30, 60, true, 10}, {40, 60, true, 0},
                                        {30, 60, false, 30}, {75, 85, true, 0},  {75, 85, false, 10}};
  CHECK(strided_transfers(pieces, false, buffers(1, 30), 40) == short_file);
}

TEST_CASE("romio_ds_* disable, or a request in one piece: one transfer a piece", "[postproc][sieve]") {
  auto pieces = vector_pieces(100, 10, 25, 3);
  SieveHints off;
  off.ds_read = off.ds_write = CbMode::disable;
  std::vector<PosixTransfer> want{{100, 110, false, 10}, {125, 135, false, 10}, {150, 160, false, 10}};
  CHECK(strided_transfers(pieces, false, off, 0) == want);
  CHECK(strided_transfers({{100, 110}}, false, SieveHints{}, 0) == std::vector<PosixTransfer>{{100, 110, false, 10}});
  CHECK(strided_transfers({}, true, SieveHints{}, 0).empty());
  CHECK_THROWS_AS(postproc::check_sieve_hints(buffers(0, 1)), ToolError);
}
