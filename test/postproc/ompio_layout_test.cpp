#include "postproc/ompio_layout.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

using namespace mpior;
using postproc::ByteRange;
using postproc::PosixTransfer;

namespace {

constexpr int64_t kMiB = 1 << 20;

PosixTransfer wrote(int64_t begin, int64_t end) { return {begin, end, false, end - begin}; }
PosixTransfer read_of(int64_t begin, int64_t end, int64_t ret) { return {begin, end, true, ret}; }
PosixTransfer entry(int64_t begin, int64_t end) { return {begin, end, false, end - begin, true}; }
PosixTransfer read_entry(int64_t begin, int64_t end) { return {begin, end, true, end - begin, true}; }
// An AIO request; `waited`: its batch is waited for after it.
PosixTransfer request(int64_t begin, int64_t end, bool waited) {
  return {begin, end, false, end - begin, false, true, waited};
}

}  // namespace

// The expectations follow Open MPI v4.1.x's OMPIO code by hand
// (common_ompio_aggregators.c, fcoll_vulcan_file_{write,read}_all.c,
// fbtl_posix_{pwritev,preadv}.c).
TEST_CASE("OMPIO: groups of consecutive ranks, the first ones one larger", "[postproc][ompio]") {
  using V = std::vector<std::vector<int32_t>>;
  CHECK(postproc::ompio_groups(5, 2) == V{{0, 1, 2}, {3, 4}});
  CHECK(postproc::ompio_groups(8, 3) == V{{0, 1, 2}, {3, 4, 5}, {6, 7}});
  CHECK(postproc::ompio_groups(3, 1) == V{{0, 1, 2}});
}

TEST_CASE("OMPIO: the aggregator count, forced or from the cost model", "[postproc][ompio]") {
  using postproc::ompio_aggregator_count;
  // cb_nodes / io_ompio_num_aggregators: forced, at most the ranks.
  CHECK(ompio_aggregator_count(5, 1024, 65536, {3, 32 * kMiB}) == 3);
  CHECK(ompio_aggregator_count(5, 1024, 65536, {9, 32 * kMiB}) == 5);
  // Simple grouping on the default view (6 MiB chunks, 1-D): capped at
  // ranks / 8, so one aggregator up to 15 ranks.
  CHECK(ompio_aggregator_count(8, 6 * kMiB, 6 * kMiB, {}) == 1);
  CHECK(ompio_aggregator_count(15, 6 * kMiB, 6 * kMiB, {}) == 1);
  CHECK(ompio_aggregator_count(16, 6 * kMiB, 6 * kMiB, {}) == 2);
  CHECK(ompio_aggregator_count(64, 6 * kMiB, 6 * kMiB, {}) == 8);
  // Past the cap the relative gain of 16 more falls under 3 %.
  CHECK(ompio_aggregator_count(1024, 6 * kMiB, 6 * kMiB, {}) == 96);
  CHECK(ompio_aggregator_count(8192, 6 * kMiB, 6 * kMiB, {}) == 192);
  // 1 KiB pieces of a 64 KiB view (2-D): the first step gains too little.
  CHECK(ompio_aggregator_count(64, 1024, 65536, {}) == 1);
}

TEST_CASE("OMPIO vulcan writes: domains from offset 0, dealt round-robin", "[postproc][ompio]") {
  using V = std::vector<std::vector<PosixTransfer>>;
  // [0, 300) over 2 aggregators: domains of 150 bytes, a cycle of 200.
  std::vector<std::vector<ByteRange>> ranks = {{{0, 100}}, {{100, 200}}, {{200, 300}}};
  CHECK(postproc::ompio_writes(ranks, 2, 400, 0) == V{{wrote(0, 150)}, {wrote(150, 300)}});
  // [1000, 1300): domain 6 ([1000, 1050)) and 8 ([1200, 1300)) go to
  // aggregator 0, 7 to aggregator 1. Aggregator 0's cycle has two entries
  // 100 bytes apart on average: sieved, the whole span read then written.
  ranks = {{{1000, 1100}}, {{1100, 1200}}, {{1200, 1300}}};
  CHECK(postproc::ompio_writes(ranks, 2, 400, 0) ==
        V{{read_of(1000, 1300, 0), wrote(1000, 1300)}, {wrote(1050, 1200)}});
  // A rank with nothing to write counts as [0, 0): the domains start at 0.
  ranks = {{}, {{100, 200}}, {{200, 300}}};
  CHECK(postproc::ompio_writes(ranks, 2, 400, 0) == V{{wrote(100, 150)}, {wrote(150, 300)}});
}

TEST_CASE("OMPIO vulcan writes: half the buffer a cycle, asynchronous past two", "[postproc][ompio]") {
  using V = std::vector<std::vector<PosixTransfer>>;
  std::vector<std::vector<ByteRange>> ranks = {{{0, 100}}, {{100, 200}}, {{200, 300}}};
  // Buffer 200: cycles of 100, two for each aggregator.
  CHECK(postproc::ompio_writes(ranks, 2, 200, 0) ==
        V{{wrote(0, 100), wrote(100, 150)}, {wrote(150, 250), wrote(250, 300)}});
  // Interleaved 10-byte pieces, one aggregator, buffer 60: 5 cycles of 30
  // bytes in three entries each, written asynchronously: never sieved.
  ranks = {{}, {}, {}};
  for (int64_t k = 0; k < 15; ++k) ranks[size_t(k % 3)].push_back({k * 20, k * 20 + 10});
  // Each cycle's three requests are waited for after its last.
  auto got = postproc::ompio_writes(ranks, 1, 60, 0);
  REQUIRE(got.size() == 1);
  CHECK(got[0].size() == 15);
  CHECK(got[0][3] == request(60, 70, false));
  CHECK(got[0][5] == request(100, 110, true));
  // With a buffer of 200 the 150 bytes are one cycle: sieved.
  CHECK(postproc::ompio_writes(ranks, 1, 400, 120) == V{{read_of(0, 290, 120), wrote(0, 290)}});
}

TEST_CASE("OMPIO vulcan reads: each group's first rank reads the group's bytes", "[postproc][ompio]") {
  using V = std::vector<std::vector<PosixTransfer>>;
  std::vector<std::vector<ByteRange>> ranks;
  for (int64_t r = 0; r < 5; ++r) ranks.push_back({{r * 100, r * 100 + 100}});
  CHECK(postproc::ompio_reads(ranks, 2, 1000, 500) == V{{read_of(0, 300, 300)}, {read_of(300, 500, 200)}});
  // Cycles of the whole buffer; a read past the file's end returns less.
  CHECK(postproc::ompio_reads(ranks, 2, 200, 450) ==
        V{{read_of(0, 200, 200), read_of(200, 300, 100)}, {read_of(300, 500, 150)}});
}

TEST_CASE("OMPIO fbtl posix: one transfer an entry unless sieved", "[postproc][ompio]") {
  // Starts 5,000 bytes apart on average: above 4 KiB, no sieving.
  std::vector<ByteRange> far = {{0, 10}, {10000, 10010}};
  // One pwritev an entry.
  CHECK(postproc::ompio_fbtl(far, false, true, 0) == std::vector<PosixTransfer>{entry(0, 10), entry(10000, 10010)});
  // One entry: a pwrite.
  CHECK(postproc::ompio_fbtl({{0, 10}}, false, true, 0) == std::vector<PosixTransfer>{wrote(0, 10)});
  // Blocks of 2 MiB on average: above 1 MiB, no sieving.
  std::vector<ByteRange> big = {{0, 2 * kMiB}, {2 * kMiB + 1, 4 * kMiB + 1}};
  CHECK(postproc::ompio_fbtl(big, true, true, 0).size() == 2);
  // Close and small: the span, read then written.
  std::vector<ByteRange> close = {{0, 10}, {20, 30}};
  CHECK(postproc::ompio_fbtl(close, false, true, 0) == std::vector<PosixTransfer>{read_of(0, 30, 0), wrote(0, 30)});
  CHECK(postproc::ompio_fbtl(close, true, true, 25) == std::vector<PosixTransfer>{read_of(0, 30, 25)});
}

// fbtl_posix_ipwritev: a request an entry, at most
// fbtl_posix_max_aio_active_reqs (2,048) in flight.
TEST_CASE("OMPIO fbtl posix AIO: batches of 2,048 requests", "[postproc][ompio]") {
  std::vector<ByteRange> entries;
  for (int64_t k = 0; k < 2050; ++k) entries.push_back({k * 20, k * 20 + 10});
  auto got = postproc::ompio_aio(entries, false);
  REQUIRE(got.size() == 2050);
  CHECK(got[0] == request(0, 10, false));
  CHECK(got[2047] == request(2047 * 20, 2047 * 20 + 10, true));
  CHECK(got[2048] == request(2048 * 20, 2048 * 20 + 10, false));
  CHECK(got[2049].waited);
  CHECK(std::count_if(got.begin(), got.end(), [](const PosixTransfer& t) { return t.waited; }) == 2);
}

// fcoll individual (common_ompio_file_{write,read}): 512 MiB a cycle, a
// cycle's pieces one fbtl call; writes outside a collective component's
// flag never sieved.
TEST_CASE("OMPIO individual: each rank's own pieces, reads alone sieved", "[postproc][ompio]") {
  using postproc::ompio_individual;
  std::vector<ByteRange> strided = {{0, 1024}, {2048, 3072}, {4096, 5120}};
  CHECK(ompio_individual(strided, false, 0) ==
        std::vector<PosixTransfer>{entry(0, 1024), entry(2048, 3072), entry(4096, 5120)});
  CHECK(ompio_individual(strided, true, 8192) == std::vector<PosixTransfer>{read_of(0, 5120, 5120)});
  // One piece past the cycle: two calls, cut at 512 MiB.
  std::vector<ByteRange> large = {{kMiB, 601 * kMiB}};
  CHECK(ompio_individual(large, false, 0) ==
        std::vector<PosixTransfer>{wrote(kMiB, 513 * kMiB), wrote(513 * kMiB, 601 * kMiB)});
  // A piece split across the cut: its tail and the next piece, close and
  // small, are the second cycle's call, sieved.
  int64_t cut = 512 * kMiB;
  std::vector<ByteRange> across = {{0, cut - 10}, {cut, cut + 20}, {cut + 30, cut + 40}};
  CHECK(ompio_individual(across, true, cut + 40) == std::vector<PosixTransfer>{read_entry(0, cut - 10),
                                                                               read_entry(cut, cut + 10),
                                                                               read_of(cut + 10, cut + 40, 30)});
}

// fcoll_base_file_select: individual's 100 at two ranks or fewer beats
// vulcan's 50 (off Lustre); --mca fcoll NAME leaves NAME alone.
TEST_CASE("OMPIO: the collective component, chosen or forced", "[postproc][ompio]") {
  using postproc::OmpioFcoll;
  CHECK(postproc::ompio_fcoll_of(2, OmpioFcoll::automatic) == OmpioFcoll::individual);
  CHECK(postproc::ompio_fcoll_of(3, OmpioFcoll::automatic) == OmpioFcoll::vulcan);
  CHECK(postproc::ompio_fcoll_of(2, OmpioFcoll::dynamic_gen2) == OmpioFcoll::dynamic_gen2);
  CHECK(postproc::ompio_fcoll_of(8, OmpioFcoll::individual) == OmpioFcoll::individual);
  CHECK(postproc::parse_ompio_fcoll("dynamic_gen2") == OmpioFcoll::dynamic_gen2);
  CHECK(postproc::parse_ompio_fcoll("two_phase") == OmpioFcoll::two_phase);
  CHECK(postproc::parse_ompio_fcoll("dynamic") == OmpioFcoll::dynamic);
  CHECK_THROWS_WITH(postproc::parse_ompio_fcoll("lustre"), Catch::Contains("dynamic_gen2 and two_phase"));
}

// fcoll_dynamic_gen2_file_write_all.c by hand.
TEST_CASE("OMPIO dynamic_gen2 writes: stripes round-robin, one call a stripe", "[postproc][ompio]") {
  // mca_fcoll_dynamic_gen2_get_configuration: the i-th of K is rank i * n / K.
  CHECK(postproc::ompio_spread_aggregators(7, 3) == std::vector<int32_t>{0, 2, 4});
  CHECK(postproc::ompio_spread_aggregators(5, 2) == std::vector<int32_t>{0, 2});
  CHECK(postproc::ompio_spread_aggregators(2, 5) == std::vector<int32_t>{0, 1});
  // Stripes of 100 over 2 aggregators: stripe 0 and 2 to the first, 1 to the second.
  std::vector<std::vector<ByteRange>> pieces = {{{0, 50}, {250, 300}}, {{50, 150}}, {{150, 250}}};
  auto got = postproc::ompio_gen2_writes(pieces, 2, 1000, 100, 0);
  REQUIRE(got.size() == 2);
  CHECK(got[0] == std::vector<PosixTransfer>{wrote(0, 100), wrote(200, 300)});
  CHECK(got[1] == std::vector<PosixTransfer>{wrote(100, 200)});
  // One aggregator, 60 bytes a cycle: [0, 10) [20, 30) [40, 50) [90, 120)
  // then [120, 130). The first cycle's stripe 0 has four entries 10 bytes
  // long, 22 apart on average: sieved; its [100, 120) is stripe 1's call.
  pieces = {{{0, 10}, {20, 30}, {40, 50}}, {{90, 130}}};
  CHECK(postproc::ompio_gen2_writes(pieces, 1, 120, 100, 0)[0] ==
        std::vector<PosixTransfer>{read_of(0, 100, 0), wrote(0, 100), wrote(100, 120), wrote(120, 130)});
}

// fcoll_dynamic_file_write_all.c by hand: vulcan's groups, the whole
// buffer a cycle, no sieving (no collective flag for fbtl posix).
TEST_CASE("OMPIO dynamic writes: each group's bytes, the buffer a cycle, never sieved", "[postproc][ompio]") {
  using V = std::vector<std::vector<PosixTransfer>>;
  // Ranks 0-2 in group 0, 3-4 in group 1; 10-byte pieces 20 apart: the
  // group's entries interleave, close and small, yet written one an entry.
  std::vector<std::vector<ByteRange>> ranks(5);
  for (int64_t k = 0; k < 10; ++k) ranks[size_t(k % 5)].push_back({k * 20, k * 20 + 10});
  CHECK(postproc::ompio_dynamic_writes(ranks, 2, 1000, 0) ==
        V{{entry(0, 10), entry(20, 30), entry(40, 50), entry(100, 110), entry(120, 130), entry(140, 150)},
          {entry(60, 70), entry(80, 90), entry(160, 170), entry(180, 190)}});
  // A buffer of 25 bytes: cycles of 25, a piece cut across two.
  CHECK(postproc::ompio_dynamic_writes(ranks, 1, 25, 0)[0][0] == entry(0, 10));
  CHECK(postproc::ompio_dynamic_writes(ranks, 1, 25, 0)[0][2] == entry(40, 45));
  CHECK(postproc::ompio_dynamic_writes(ranks, 1, 25, 0)[0][3] == entry(45, 50));
  // Its reads are vulcan's.
  CHECK(postproc::ompio_collective(ranks, true, postproc::OmpioFcoll::dynamic, 2, 1000, 0, 0, 200).transfers ==
        postproc::ompio_reads(ranks, 2, 1000, 200));
}

// fcoll_two_phase_{file_write_all,support_fns}.c by hand.
TEST_CASE("OMPIO two_phase: ROMIO's domains and windows on spread aggregators", "[postproc][ompio]") {
  using V = std::vector<std::vector<PosixTransfer>>;
  // [100, 400) over 2 aggregators (ranks 0 and 1 of 3): domains of 150.
  std::vector<std::vector<ByteRange>> ranks = {{{100, 200}}, {{200, 300}}, {{300, 400}}};
  auto dealt = postproc::ompio_collective(ranks, false, postproc::OmpioFcoll::two_phase, 2, 1000, 0, 0, 0);
  CHECK(dealt.movers == std::vector<int32_t>{0, 1});
  CHECK(dealt.transfers == V{{wrote(100, 250)}, {wrote(250, 400)}});
  // Windows of 100 from each domain's first byte: the last one shorter.
  CHECK(postproc::ompio_two_phase(ranks, 2, 100, true, 400) ==
        V{{read_of(100, 200, 100), read_of(200, 250, 50)}, {read_of(250, 350, 100), read_of(350, 400, 50)}});
  // A hole in a written window: the window read once (short at the
  // file's end, no second read), then written whole; a window with no
  // requested byte is skipped.
  ranks = {{{0, 10}, {30, 40}}, {{250, 260}}};
  CHECK(postproc::ompio_two_phase(ranks, 1, 100, false, 20) ==
        V{{read_of(0, 100, 20), wrote(0, 100), read_of(200, 260, 0), wrote(200, 260)}});
  // 7 ranks, 3 aggregators: ranks 0, 2 and 4.
  ranks.assign(7, {});
  for (int64_t r = 0; r < 7; ++r) ranks[size_t(r)] = {{r * 10, r * 10 + 10}};
  CHECK(postproc::ompio_collective(ranks, true, postproc::OmpioFcoll::two_phase, 3, 1000, 0, 0, 70).movers ==
        std::vector<int32_t>{0, 2, 4});
}
