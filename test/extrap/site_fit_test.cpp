// A class of ranks seen at two rank counts only takes the model its position
// fits at every rank (extrap/site_fit.hpp): IOR -a HDF5 -c's ranks without a
// metadata entry, where a rank-modulo model fits as well as the right one.
#include <fcntl.h>

#include <catch2/catch.hpp>

#include "extrap/extrapolate.hpp"
#include "test/extrap/input_of.hpp"
#include "test/postproc/fixture.hpp"

using namespace mpior;

namespace {

constexpr int64_t kWriters = 7;  // ranks below write an entry; the others form a class of their own

// Ranks r < 7 write an entry at r*512; every rank reads 16 KiB at
// 2048 + 65536*(r+n), as IOR's second segment with HDF5's 2 KiB header.
extrap::Input entries_run(int32_t n) {
  std::vector<trace::RankTrace> ranks;
  for (int32_t r = 0; r < n; ++r) {
    test::RankBuilder b(r, n);
    int32_t f = b.file("/data/blocks.h5", O_RDWR | O_CREAT);
    b.open(f, 10, O_RDWR | O_CREAT, 10);
    if (r < kWriters) b.pwrite(f, 10, r * 512, 512, 512);
    b.pread(f, 10, 2048 + 65536 * int64_t(r + n), 16384, 16384);
    ranks.push_back(b.finish());
  }
  return test::input_of(std::move(ranks), "./entries", "t" + std::to_string(n));
}

}  // namespace

TEST_CASE("a class seen at two rank counts takes the model of its position at every rank", "[extrap][site]") {
  // The ranks without an entry are seen at 8 (rank 7 alone) and 12 ranks,
  // where 985088 + 65536*((r+9) mod n) fits their offsets too.
  trace::Plan p = extrap::extrapolate({entries_run(2), entries_run(4), entries_run(8), entries_run(12)}, 16);
  REQUIRE(p.ranks.size() == 16);
  for (int32_t r = 0; r < 16; ++r) {
    INFO("rank " << r);
    CHECK(test::first_offset(p, r, trace::Kind::pread) == 2048 + 65536 * int64_t(r + 16));
  }
}
