#include "postproc/romio_lustre.hpp"

#include <catch2/catch.hpp>
#include <vector>

#include "postproc/romio_layout.hpp"
#include "trace/tool_error.hpp"

using namespace mpior;
using postproc::ByteRange;
using postproc::LustreHints;
using postproc::PosixTransfer;

namespace {

LustreHints striped(int64_t unit, int factor, int co_ratio = 1, bool ds_in_coll = true) {
  return {unit, factor, co_ratio, ds_in_coll};
}

}  // namespace

// The expectations follow ADIOI_LUSTRE_Get_striping_info by hand.
TEST_CASE("Lustre writes: how many aggregators the stripes are dealt to", "[postproc][lustre]") {
  using postproc::lustre_aggregator_count;
  // cb_nodes at least the factor: a multiple of it, at most co_ratio
  // aggregators a target.
  CHECK(lustre_aggregator_count(8, striped(1, 4)) == 4);
  CHECK(lustre_aggregator_count(8, striped(1, 4, 2)) == 8);
  CHECK(lustre_aggregator_count(9, striped(1, 4, 3)) == 8);
  CHECK(lustre_aggregator_count(42, striped(1, 20, 3)) == 40);  // ROMIO's own example
  CHECK(lustre_aggregator_count(4, striped(1, 4)) == 4);
  // Fewer: the largest divisor of the factor not above cb_nodes.
  CHECK(lustre_aggregator_count(8, striped(1, 60)) == 6);  // ROMIO's own example: 2, 3, 4, 5, then 6
  CHECK(lustre_aggregator_count(5, striped(1, 12)) == 4);  // the cofactor of 3
  CHECK(lustre_aggregator_count(4, striped(1, 16)) == 4);  // a square's root
  CHECK(lustre_aggregator_count(3, striped(1, 7)) == 1);   // a prime factor: one aggregator
  CHECK(lustre_aggregator_count(1, striped(1, 8)) == 1);
}

TEST_CASE("Lustre writes: a byte's aggregator is its stripe's, round-robin", "[postproc][lustre]") {
  using postproc::lustre_aggregator_of;
  int64_t mib = 1 << 20;
  CHECK(lustre_aggregator_of(0, mib, 3) == 0);
  CHECK(lustre_aggregator_of(mib - 1, mib, 3) == 0);
  CHECK(lustre_aggregator_of(mib, mib, 3) == 1);
  CHECK(lustre_aggregator_of(3 * mib + 5, mib, 3) == 0);
  CHECK(lustre_aggregator_of(5 * mib, mib, 3) == 2);
}

// ADIOI_LUSTRE_Exch_and_write by hand, stripes of 100 bytes over 2
// aggregators: steps of 200 bytes from byte 0 (the first byte, 30, rounded
// down to a stripe); in each step an aggregator writes from its first byte
// in its stripe up to the stripe's end or its last byte in the call.
TEST_CASE("Lustre writes: one stripe a step per aggregator, holes read first", "[postproc][lustre]") {
  std::vector<ByteRange> requested{{30, 90}, {120, 180}, {250, 260}, {430, 500}};
  auto got = postproc::lustre_writes(requested, 2, striped(100, 2), 1000);
  REQUIRE(got.size() == 2);
  // Aggregator 0 (last byte 499): step 0 [30, 100) has a hole at its tail,
  // step 1 [250, 300) after its 10 bytes, step 2 [430, 500) none.
  CHECK(got[0] == std::vector<PosixTransfer>{{30, 100, true, 70},
                                             {30, 100, false, 70},
                                             {250, 300, true, 50},
                                             {250, 300, false, 50},
                                             {430, 500, false, 70}});
  // Aggregator 1 (last byte 179): step 0 only, no hole up to its last byte.
  CHECK(got[1] == std::vector<PosixTransfer>{{120, 180, false, 60}});
}

// ROMIO's comment: blocks of 60 bytes written 30 at a time, stripes of 100:
// the aggregator holds [0, 30) and [60, 90).
TEST_CASE("Lustre writes: romio_lustre_ds_in_coll decides how a hole is written", "[postproc][lustre]") {
  std::vector<ByteRange> requested{{0, 30}, {60, 90}};
  CHECK(postproc::lustre_writes(requested, 1, striped(100, 1), 1000)[0] ==
        std::vector<PosixTransfer>{{0, 90, true, 90}, {0, 90, false, 90}});
  CHECK(postproc::lustre_writes(requested, 1, striped(100, 1, 1, false), 1000)[0] ==
        std::vector<PosixTransfer>{{0, 30, false, 30}, {60, 90, false, 30}});
  // A later byte of the same aggregator makes the stripe's tail a hole too;
  // a new file's read finds nothing.
  requested.emplace_back(100, 110);
  CHECK(postproc::lustre_writes(requested, 1, striped(100, 1), 0)[0] ==
        std::vector<PosixTransfer>{{0, 100, true, 0}, {0, 100, false, 100}, {100, 110, false, 10}});
  CHECK(postproc::lustre_writes(requested, 1, striped(100, 1, 1, false), 0)[0] ==
        std::vector<PosixTransfer>{{0, 30, false, 30}, {60, 90, false, 30}, {100, 110, false, 10}});
}

TEST_CASE("Lustre hints: a factor needs a unit, both at least 1", "[postproc][lustre]") {
  postproc::CollectiveHints h;
  h.striping_unit = 4096, h.striping_factor = 4;
  CHECK_NOTHROW(postproc::check_hints(h));
  h.striping_factor = -1;
  CHECK_THROWS_WITH(postproc::check_hints(h), Catch::Contains("striping factor must be at least 1"));
  h.striping_factor = 4, h.striping_unit = 0;
  CHECK_THROWS_WITH(postproc::check_hints(h), Catch::Contains("a striping factor needs a striping unit"));
}

TEST_CASE("Lustre hints: romio_lustre_co_ratio at least 1, coll_threshold not negative", "[postproc][lustre]") {
  postproc::CollectiveHints h;
  h.striping_unit = 4096, h.striping_factor = 4, h.lustre_co_ratio = 0;
  CHECK_THROWS_WITH(postproc::check_hints(h), Catch::Contains("romio_lustre_co_ratio must be at least 1"));
  h.lustre_co_ratio = 2, h.lustre_coll_threshold = -1;
  CHECK_THROWS_WITH(postproc::check_hints(h), Catch::Contains("romio_lustre_coll_threshold must not be negative"));
}

// ADIOI_LUSTRE_Docollect by hand: the average is all the bytes over all the
// contiguous pieces, divided as integers; only one strictly above a
// threshold above 0 turns two-phase off.
TEST_CASE("Lustre writes: romio_lustre_coll_threshold against the average piece", "[postproc][lustre]") {
  using postproc::lustre_docollect;
  CHECK(lustre_docollect(1 << 30, 1, 0));  // the default takes every call
  CHECK(lustre_docollect(4096, 1, 4096));  // equal: still two-phase
  CHECK_FALSE(lustre_docollect(4097, 1, 4096));
  CHECK(lustre_docollect(8193, 2, 4096));  // 4096.5 rounds down
  CHECK_FALSE(lustre_docollect(8194, 2, 4096));
  CHECK(lustre_docollect(0, 0, 1));  // no piece: ROMIO's average 0
}
