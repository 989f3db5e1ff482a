// A synthetic SPMD rank trace for the merge tests (merge_tree_test,
// merge_job_test): N-to-N, N-to-1 and a file per group of 4, 20 iterations;
// irregular: every third rank makes rank-dependent iterations and an extra
// call, one thread more on odd ranks.
#pragma once

#include <fcntl.h>

#include <string>

#include "test/postproc/fixture.hpp"

namespace mpior::test {

inline trace::RankTrace spmd_rank_trace(int32_t r, int32_t size, bool irregular) {
  constexpr int64_t kBlock = 4096;
  RankBuilder b(r, size);
  int32_t own = b.file("/scratch/own_" + std::to_string(r));
  int32_t shared = b.file("/scratch/shared");
  int32_t group = b.file("/scratch/group_" + std::to_string(r / 4));
  b.open(own, 3, O_CREAT | O_WRONLY, 3);
  b.open(shared, 4, O_CREAT | O_WRONLY, 4);
  b.open(group, 5, O_CREAT | O_WRONLY, 5);
  int64_t iters = irregular && r % 3 == 0 ? 10 + r : 20;
  for (int64_t i = 0; i < iters; ++i) {
    b.pwrite(own, 3, i * kBlock, kBlock, kBlock);
    b.pwrite(shared, 4, (i * size + r) * kBlock, kBlock, kBlock);
    b.pwrite(group, 5, (i * 4 + r % 4) * kBlock, kBlock, kBlock);
    if (irregular && r % 3 == 0) b.pread(own, 3, 0, r, r);
    b.collective(trace::Kind::MPI_Barrier, 0);
  }
  if (irregular && r % 2) {
    b.thread(1);
    b.pwrite(own, 3, 0, 8 * r, 8 * r);
    b.thread(0);
  }
  return b.finish();
}

}  // namespace mpior::test
