// A neighbour along one dimension of a Cartesian process grid (MPI_Cart_shift
// with periods, ranks in row-major order): the rank whose coordinate in that
// dimension is one more (or one less), wrapping, the others the same. A
// dimension is its stride b (the product of the faster dimensions' sizes)
// and its size d, each fixed or a fraction of the rank count: LAMMPS on a
// 2 x 2 x n/4 grid has its z neighbours at stride 1 in d = n/4, its y
// neighbour at stride n/4 in d = 2, its x neighbour at stride n/2.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mpior::extrap {

// The shifts searched: every stride and size below, both directions.
int64_t grid_shift_count();

// Rank r's neighbour at n ranks under shift k, or nullopt-like -1 when the
// grid does not divide n (the model does not apply there).
int64_t grid_neighbour(int64_t k, int64_t r, int64_t n);

// "grid(b=n/4,d=2,+1)"
std::string grid_shift_text(int64_t k);

// The ranks in (0, n) where the neighbour wraps or a new block starts.
std::vector<int64_t> grid_breaks(int64_t k, int64_t n);

}  // namespace mpior::extrap
