// A halo exchange on a 2 x 2 x n/4 process grid (LAMMPS with `processors
// 2 2 *`), traced at 12, 16 and 20 ranks and extrapolated to 32 and 8,192:
// every rank exchanges with its grid neighbours, and rank 0's neighbours
// (1, 2, 3, 3, 6, 6 at 12 ranks: one run of three, then pairs; 1, 3, 4, 4,
// 8, 8 at 16: no run) compress differently at each count.
#include <fcntl.h>

#include <catch2/catch.hpp>

#include "extrap/extrapolate.hpp"
#include "test/extrap/input_of.hpp"
#include "trace/cursor.hpp"

using namespace mpior;

namespace {

int64_t cart_neighbour(int64_t r, int64_t b, int64_t d, int64_t step) {
  int64_t coord = r / b % d;
  return r + (((coord + step) % d + d) % d - coord) * b;
}

// The destinations of rank r's exchanges at n ranks: z up, z down, y, x.
std::vector<int64_t> halo_peers(int64_t r, int64_t n) {
  return {cart_neighbour(r, 1, n / 4, 1), cart_neighbour(r, 1, n / 4, -1), cart_neighbour(r, n / 4, 2, 1),
          cart_neighbour(r, n / 2, 2, 1)};
}

extrap::Input grid_run(int32_t n) {
  std::vector<trace::RankTrace> ranks;
  for (int32_t r = 0; r < n; ++r) {
    test::RankBuilder b(r, n);
    int32_t out = b.file("/data/grid.out", O_WRONLY | O_CREAT);
    std::vector<int64_t> to = halo_peers(r, n), from = halo_peers(r, n);
    std::swap(from[0], from[1]);  // up sends to z+1 and receives from z-1
    for (int step = 0; step < 3; ++step) {
      for (size_t d = 0; d < to.size(); ++d) {
        b.site(0x30);  // one call in a loop over the directions
        b.sendrecv(0, to[d], 0, from[d], 0, from[d], 0);
      }
      if (r != 0) continue;
      b.site(0x40);
      b.pwrite(out, 10, step * 4096, 4096, 4096);
    }
    ranks.push_back(b.finish());
  }
  return test::input_of(std::move(ranks), "./halo", "g" + std::to_string(n));
}

}  // namespace

TEST_CASE("a halo on a 2 x 2 x n/4 grid extrapolates to its grid neighbours") {
  std::vector<extrap::Input> inputs = {grid_run(12), grid_run(16), grid_run(20)};
  for (int64_t n : {32, 8192}) {
    trace::Plan p = extrap::extrapolate(inputs, n, {});
    REQUIRE(int64_t(p.ranks.size()) == n);
    for (int64_t r : {int64_t(0), int64_t(1), n / 4 - 1, n / 4, n / 2, n / 2 + 5, n - 1}) {
      INFO("n=" << n << " rank " << r);
      std::vector<int64_t> dests;
      for (const trace::Stream& s : p.streams) {
        if (!trace::seq_contains(s.view(s.ranks), r)) continue;
        trace::EventCursor c(s, int32_t(r));
        trace::Event ev;
        while (c.next(ev))
          if (ev.kind == trace::Kind::MPI_Sendrecv) dests.push_back(ev.args[trace::arg::peer]);
      }
      std::vector<int64_t> want;
      for (int step = 0; step < 3; ++step)
        for (int64_t d : halo_peers(r, n)) want.push_back(d);
      CHECK(dests == want);
    }
  }
}
