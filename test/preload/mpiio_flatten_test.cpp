// The view flattener (preload/mpiio_flatten.cpp) against real MPICH datatypes:
// the contiguous pieces of one filetype, in typemap order, adjacent ones
// merged, and the extents the view record keeps.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <vector>

#include "preload/mpiio_handlers.hpp"

using mpior::preload::mpi::Block;
using mpior::preload::mpi::flatten_type;

namespace {

void init_mpi() {
  static const bool once = [] {
    int up = 0;
    MPI_Initialized(&up);
    if (!up) MPI_Init(nullptr, nullptr);
    std::atexit([] { MPI_Finalize(); });
    return true;
  }();
  (void)once;
}

// The blocks of t as (offset, length) pairs; fails the test if t cannot be flattened.
std::vector<std::pair<int64_t, int64_t>> blocks(MPI_Datatype t, size_t cap = 1 << 16) {
  std::vector<Block> out;
  REQUIRE(flatten_type(t, out, cap));
  std::vector<std::pair<int64_t, int64_t>> v;
  for (const Block& b : out) v.emplace_back(b.offset, b.length);
  return v;
}

std::pair<int64_t, int64_t> lb_extent(MPI_Datatype t) {
  MPI_Count lb = 0, extent = 0;
  MPI_Type_get_extent_x(t, &lb, &extent);
  return {lb, extent};
}

using P = std::vector<std::pair<int64_t, int64_t>>;

}  // namespace

TEST_CASE("contiguous and named types are one block", "[preload][mpiio][flatten]") {
  init_mpi();
  CHECK(blocks(MPI_DOUBLE) == P{{0, 8}});
  MPI_Datatype c;
  MPI_Type_contiguous(5, MPI_INT, &c);
  CHECK(blocks(c) == P{{0, 20}});
  MPI_Type_free(&c);
  // A vector whose stride equals its block length has no holes: merged.
  MPI_Type_vector(3, 2, 2, MPI_INT, &c);
  CHECK(blocks(c) == P{{0, 24}});
  MPI_Type_free(&c);
}

TEST_CASE("vector and hvector: one block per stride", "[preload][mpiio][flatten]") {
  init_mpi();
  MPI_Datatype v, hv;
  MPI_Type_vector(3, 2, 5, MPI_INT, &v);
  CHECK(blocks(v) == P{{0, 8}, {20, 8}, {40, 8}});
  CHECK(lb_extent(v) == std::pair<int64_t, int64_t>{0, 48});
  MPI_Type_create_hvector(2, 3, 100, MPI_SHORT, &hv);
  CHECK(blocks(hv) == P{{0, 6}, {100, 6}});
  MPI_Type_free(&v);
  MPI_Type_free(&hv);
}

TEST_CASE("indexed, indexed block and struct types", "[preload][mpiio][flatten]") {
  init_mpi();
  int lens[3] = {2, 1, 3}, displs[3] = {0, 5, 9};
  MPI_Datatype ix, ib, st;
  MPI_Type_indexed(3, lens, displs, MPI_INT, &ix);
  CHECK(blocks(ix) == P{{0, 8}, {20, 4}, {36, 12}});
  CHECK(lb_extent(ix) == std::pair<int64_t, int64_t>{0, 48});
  int bdispl[2] = {1, 4};
  MPI_Type_create_indexed_block(2, 2, bdispl, MPI_DOUBLE, &ib);
  CHECK(blocks(ib) == P{{8, 16}, {32, 16}});
  CHECK(lb_extent(ib) == std::pair<int64_t, int64_t>{8, 40});
  int slens[3] = {2, 1, 4};
  MPI_Aint sdispl[3] = {0, 16, 24};
  MPI_Datatype stypes[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_Type_create_struct(3, slens, sdispl, stypes, &st);
  CHECK(blocks(st) == P{{0, 8}, {16, 12}});  // the double and the chars touch: merged
  MPI_Type_free(&ix);
  MPI_Type_free(&ib);
  MPI_Type_free(&st);
}

TEST_CASE("subarrays in C and Fortran order", "[preload][mpiio][flatten]") {
  init_mpi();
  // 4 x 6 ints, the 2 x 3 block at row 1, column 2: rows 1 and 2.
  int sizes[2] = {4, 6}, subs[2] = {2, 3}, starts[2] = {1, 2};
  MPI_Datatype c, f;
  MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &c);
  CHECK(blocks(c) == P{{32, 12}, {56, 12}});
  CHECK(lb_extent(c) == std::pair<int64_t, int64_t>{0, 96});  // the whole array
  // The same block seen from Fortran: the first dimension is the fastest.
  int fsizes[2] = {6, 4}, fsubs[2] = {3, 2}, fstarts[2] = {2, 1};
  MPI_Type_create_subarray(2, fsizes, fsubs, fstarts, MPI_ORDER_FORTRAN, MPI_INT, &f);
  CHECK(blocks(f) == blocks(c));
  MPI_Type_free(&c);
  MPI_Type_free(&f);
  // 3 dimensions, whole rows in the last one: each plane's rows merge.
  int s3[3] = {3, 2, 4}, sub3[3] = {2, 2, 4}, st3[3] = {1, 0, 0};
  MPI_Type_create_subarray(3, s3, sub3, st3, MPI_ORDER_C, MPI_CHAR, &c);
  CHECK(blocks(c) == P{{8, 16}});
  MPI_Type_free(&c);
}

TEST_CASE("resized types tile by their new extent", "[preload][mpiio][flatten]") {
  init_mpi();
  MPI_Datatype pair, wide, three;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_create_resized(pair, 0, 16, &wide);
  CHECK(blocks(wide) == P{{0, 8}});
  CHECK(lb_extent(wide) == std::pair<int64_t, int64_t>{0, 16});
  MPI_Type_contiguous(3, wide, &three);
  CHECK(blocks(three) == P{{0, 8}, {16, 8}, {32, 8}});
  CHECK(lb_extent(three) == std::pair<int64_t, int64_t>{0, 48});
  MPI_Datatype shifted, tiles;  // a lower bound below the data: the data sits 8 bytes into each tile
  MPI_Type_create_resized(pair, -8, 24, &shifted);
  MPI_Type_contiguous(2, shifted, &tiles);
  CHECK(blocks(tiles) == P{{0, 8}, {24, 8}});
  CHECK(lb_extent(tiles) == std::pair<int64_t, int64_t>{-8, 48});
  for (MPI_Datatype* t : {&pair, &wide, &three, &shifted, &tiles}) MPI_Type_free(t);
}

TEST_CASE("nested constructors and displacements", "[preload][mpiio][flatten]") {
  init_mpi();
  MPI_Datatype v, hv, dup, hix;
  MPI_Type_vector(2, 2, 4, MPI_INT, &v);  // (0,8) (16,8), extent 24
  MPI_Type_create_hvector(2, 1, 100, v, &hv);
  CHECK(blocks(hv) == P{{0, 8}, {16, 8}, {100, 8}, {116, 8}});
  MPI_Type_dup(hv, &dup);
  CHECK(blocks(dup) == blocks(hv));
  // A hindexed of the vector starting 1000 bytes in, two copies back to back.
  int len[2] = {2, 1};
  MPI_Aint at[2] = {1000, 2000};
  MPI_Type_create_hindexed(2, len, at, v, &hix);
  // The copies touch: the first one's last block and the second's first merge.
  CHECK(blocks(hix) == P{{1000, 8}, {1016, 16}, {1040, 8}, {2000, 8}, {2016, 8}});
  CHECK(lb_extent(hix) == std::pair<int64_t, int64_t>{1000, 1024});
  for (MPI_Datatype* t : {&v, &hv, &dup, &hix}) MPI_Type_free(t);
}

TEST_CASE("too many blocks or a darray: not flattened", "[preload][mpiio][flatten]") {
  init_mpi();
  MPI_Datatype v, d;
  MPI_Type_vector(100, 1, 2, MPI_INT, &v);
  std::vector<Block> out;
  CHECK_FALSE(flatten_type(v, out, 10));
  out.clear();
  CHECK(flatten_type(v, out, 100));
  CHECK(out.size() == 100);
  int gs[1] = {16}, dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {2};
  MPI_Type_create_darray(2, 1, 1, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &d);
  out.clear();
  CHECK_FALSE(flatten_type(d, out, 1 << 16));
  MPI_Type_free(&v);
  MPI_Type_free(&d);
}
