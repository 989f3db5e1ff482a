#include "preload/clock_align.hpp"

#include "preload/config.hpp"
#include "preload/mpi_state.hpp"
#include "preload/trace_clock.hpp"

namespace mpior::preload::clock_align {

namespace {

constinit config::Option<int64_t> opt_skew{
    "MPIOR_TEST_CLOCK_SKEW_NS", 0,
    "test hook: rank r's clock reads this many ns times r ahead (trace start and the alignment at MPI_Init), "
    "as if the ranks' clocks disagreed"};
MPIOR_REGISTER_OPTION(opt_skew);

constexpr int kRounds = 4;   // ping-pongs per rank; the fastest round wins
constexpr int kTag = 28013;  // below any MPI_TAG_UB; on the private communicator only

}  // namespace

int64_t test_skew_ns(int rank) noexcept { return opt_skew.get() * rank; }

int64_t offset_to_rank0(MPI_Comm comm, int rank, int size) noexcept {
  const int64_t skew = test_skew_ns(rank);
  auto now = [skew] { return clock::monotonic_ns() + skew; };
  int64_t t = 0;
  if (rank == 0) {
    // Rank 0 answers each rank's requests with its own clock, in rank order.
    for (int r = 1; r < size; ++r)
      for (int i = 0; i < kRounds; ++i) {
        mpi::pmpi::Recv(&t, 1, MPI_INT64_T, r, kTag, comm, MPI_STATUS_IGNORE);
        t = now();
        mpi::pmpi::Send(&t, 1, MPI_INT64_T, r, kTag, comm);
      }
    return 0;
  }
  int64_t best_rtt = INT64_MAX, offset = 0;
  for (int i = 0; i < kRounds; ++i) {
    int64_t sent = now();
    mpi::pmpi::Send(&sent, 1, MPI_INT64_T, 0, kTag, comm);
    mpi::pmpi::Recv(&t, 1, MPI_INT64_T, 0, kTag, comm, MPI_STATUS_IGNORE);
    int64_t got = now(), rtt = got - sent;
    if (rtt < best_rtt) best_rtt = rtt, offset = t - (sent + rtt / 2);
  }
  return offset;
}

}  // namespace mpior::preload::clock_align
