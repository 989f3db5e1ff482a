#include "exchange_cost.hpp"

#include <algorithm>
#include <array>
#include <atomic>

#include "clock.hpp"
#include "config.hpp"
#include "mpi_state.hpp"

namespace mpior::preload::exchange_cost {

namespace {

// Rounds of the four patterns below, in turn; medians of each. Few enough
// that 8 ranks oversubscribed on 2 cores (milliseconds a collective) start
// in well under a second.
constexpr int kRounds = 15;

constinit config::Option<int64_t> opt_test_extra{
    "MPIOR_TEST_EXCHANGE_EXTRA_NS", -1,
    "test hook: what online pruning's decision exchange adds to a traced collective, in ns, instead of the figure "
    "measured at MPI_Init (-1: measure)"};
MPIOR_REGISTER_OPTION(opt_test_extra);

std::atomic<int64_t> g_barrier_extra{0}, g_beside_extra{0};

int64_t median(std::array<int64_t, kRounds>& v) {
  std::nth_element(v.begin(), v.begin() + kRounds / 2, v.end());
  return v[kRounds / 2];
}

// The decision exchange as the pruner makes it (piggyback/pruner.cpp:
// all_to_all), around `inside`.
template <typename Inside>
void exchange(MPI_Comm comm, Inside&& inside) {
  int mine = 0, result = 0;
  MPI_Request req = MPI_REQUEST_NULL;
  mpi::pmpi::Iallreduce(&mine, &result, 1, MPI_INT, MPI_LOR, comm, &req);
  inside();
  mpi::pmpi::Wait(&req, MPI_STATUS_IGNORE);
}

}  // namespace

void measure(MPI_Comm comm) noexcept {
  if (opt_test_extra.get() >= 0) {
    constexpr int64_t kTicks = 1'000'000'000;
    double ticks_per_ns = double(kTicks) / double(std::max<int64_t>(1, clock::duration_ns(kTicks)));
    int64_t extra = int64_t(double(opt_test_extra.get()) * ticks_per_ns);
    g_barrier_extra.store(extra, std::memory_order_relaxed);
    g_beside_extra.store(extra, std::memory_order_relaxed);
    return;
  }
  std::array<int64_t, kRounds> barrier{}, replaced{}, alone{}, beside{};
  int in = 1, out = 0;
  auto allreduce = [&] { mpi::pmpi::Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, comm); };
  auto timed = [](auto&& f) {
    int64_t t0 = clock::now();
    f();
    return clock::now() - t0;
  };
  mpi::pmpi::Barrier(comm);  // the ranks arrive together, as in an SPMD loop's collectives
  for (int i = 0; i < kRounds; ++i) {
    barrier[size_t(i)] = timed([&] { mpi::pmpi::Barrier(comm); });
    replaced[size_t(i)] = timed([&] { exchange(comm, [] {}); });
    alone[size_t(i)] = timed(allreduce);
    beside[size_t(i)] = timed([&] { exchange(comm, allreduce); });
  }
  g_barrier_extra.store(std::max<int64_t>(0, median(replaced) - median(barrier)), std::memory_order_relaxed);
  g_beside_extra.store(std::max<int64_t>(0, median(beside) - median(alone)), std::memory_order_relaxed);
}

int64_t extra_ticks(bool replaced_barrier) noexcept {
  return (replaced_barrier ? g_barrier_extra : g_beside_extra).load(std::memory_order_relaxed);
}

}  // namespace mpior::preload::exchange_cost
