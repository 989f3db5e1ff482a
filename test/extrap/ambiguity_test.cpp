// Structure that two models of the registry fit exactly, with as many free
// parameters, and that they predict differently at the target is refused
// with the rank count that would decide (extrap/ambiguity.hpp); traced
// there too, it extrapolates.
#include "extrap/ambiguity.hpp"

#include <fcntl.h>

#include <catch2/catch.hpp>
#include <string>

#include "extrap/extrapolate.hpp"
#include "test/extrap/input_of.hpp"
#include "test/postproc/fixture.hpp"

using namespace mpior;

namespace {

constexpr int64_t kEntries = 7;  // ranks below write an entry; the others a block from a call site of their own

// Ranks r < 7 write an entry at r*512; the others write 16 KiB at
// 2048 + 65536*(r+n) from another call site, so that no other class's
// values at that site choose between the models their offsets fit.
extrap::Input blocks_run(int32_t n) {
  std::vector<trace::RankTrace> ranks;
  for (int32_t r = 0; r < n; ++r) {
    test::RankBuilder b(r, n);
    int32_t f = b.file("/data/blocks.h5", O_RDWR | O_CREAT);
    b.open(f, 10, O_RDWR | O_CREAT, 10);
    if (r < kEntries) {
      b.pwrite(f, 10, r * 512, 512, 512);
    } else {
      b.site(0x4242);
      b.pwrite(f, 10, 2048 + 65536 * int64_t(r + n), 16384, 16384);
    }
    ranks.push_back(b.finish());
  }
  return test::input_of(std::move(ranks), "./blocks", "t" + std::to_string(n));
}

}  // namespace

TEST_CASE("models that fit as exactly and part at the target are refused with the count to trace",
          "[extrap][ambiguity]") {
  // The ranks without an entry are seen at 8 (rank 7 alone) and 12 ranks:
  // 985088 + 65536*((r+9) mod n) fits their offsets as well as
  // 2048 + 65536*(r+n), and at 16 ranks rank 7 writes at 985088 or 1509376
  // (without the refusal: 985088, the registry's first).
  std::string message;
  try {
    extrap::extrapolate({blocks_run(2), blocks_run(4), blocks_run(8), blocks_run(12)}, 16);
  } catch (const extrap::Ambiguous& e) {
    message = e.what();
  }
  INFO(message);
  CHECK(message.find("(pwrite at call site 0x4242), off: the models rank-modulo + constant") != std::string::npos);
  CHECK(message.find("rank-linear + n = 2048+65536*r+65536*n") != std::string::npos);
  CHECK(message.find("part at 16 ranks (rank 7: 985088 or 1509376)") != std::string::npos);
  CHECK(message.find("n=12 rank 11: 1509376") != std::string::npos);
  CHECK(message.find("trace at 9 ranks too (there rank 7 gets 1443840 or 1050624)") != std::string::npos);
}

TEST_CASE("traced at the count the refusal names, the values choose the model", "[extrap][ambiguity]") {
  trace::Plan p = extrap::extrapolate({blocks_run(2), blocks_run(4), blocks_run(8), blocks_run(9), blocks_run(12)}, 16);
  for (int32_t r = kEntries; r < 16; ++r) {
    INFO("rank " << r);
    CHECK(test::first_offset(p, r, trace::Kind::pwrite, 16384) == 2048 + 65536 * int64_t(r + 16));
  }
}

TEST_CASE("a model with more free parameters is no rival of a simpler one", "[extrap][ambiguity]") {
  // 27 + 2r at every rank of 3 to 6 ranks: 27 + 2*(r mod k) fits too for any
  // k above 5, with a searched parameter more.
  std::vector<extrap::Sample> pts;
  for (int64_t n = 3; n <= 6; ++n)
    for (int64_t r = 0; r < n; ++r) pts.push_back({r, n, 27 + 2 * r});
  std::optional<extrap::Fit> f = extrap::fit_exact(pts);
  REQUIRE(f);
  CHECK(std::string(f->name) == "rank-linear");
  for (const extrap::Fit& rival : extrap::exact_rivals(pts, *f)) CHECK(extrap::free_parameters(rival) <= 2);
  std::vector<int64_t> ranks(64);
  for (int64_t r = 0; r < 64; ++r) ranks[size_t(r)] = r;
  extrap::RanksAt all = [](int64_t n) {
    std::vector<int64_t> out;
    for (int64_t r = 0; r < n; ++r) out.push_back(r);
    return out;
  };
  CHECK_FALSE(extrap::parting_rival(*f, {pts, {}}, ranks, 64, all));
}
