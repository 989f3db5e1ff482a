// A replay thread's view of the topologies its rank was in: its neighbours
// per global communicator, from the mpior_neighbor records under the calls
// that made those communicators. A neighbourhood collective waits for its
// in-neighbours only (a communicator without records: all its members).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "trace/arg_views.hpp"
#include "trace/event.hpp"

namespace mpior::replay {

struct Neighbors {
  std::vector<int32_t> in, out;  // ranks in the communicator; kProcNull entries are skipped
};

class Topologies {
 public:
  void add(int32_t comm, const trace::Event& ev) {
    Neighbors& n = map_[comm];
    int64_t p = mpi_args(ev).peer();
    if (p < 0) return;  // MPI_PROC_NULL at a cartesian edge
    (mpi_args(ev).direction() == trace::kNeighborOut ? n.out : n.in).push_back(int32_t(p));
  }
  // The communicator's neighbours, nullptr when no topology was recorded.
  const Neighbors* of(int32_t comm) const {
    auto it = map_.find(comm);
    return it == map_.end() ? nullptr : &it->second;
  }

 private:
  std::unordered_map<int32_t, Neighbors> map_;
};

}  // namespace mpior::replay
