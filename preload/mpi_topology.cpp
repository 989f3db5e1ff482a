// The dependency structure of neighbourhood and intercommunicator
// collectives. The neighbours of this rank in a communicator with a
// topology, recorded as mpior_neighbor records under the call that made it:
// what a replay of a neighbourhood collective waits for. MPI itself says who
// they are, so distributed graphs (each rank naming any edges) need no
// reassembly. And the roles in a rooted intercommunicator collective.
#include <array>
#include <vector>

#include "preload/mpi_handlers.hpp"
#include "preload/recorder.hpp"
#include "trace/arg_setters.hpp"

namespace mpior::preload::mpi {

using namespace trace;

namespace {

void record_neighbor(Call& c, int32_t id, int64_t peer, int64_t direction) noexcept {
  RawEvent ev;
  ev.kind = Kind::mpior_neighbor;
  ev.depth = uint8_t(c.ev().depth < 254 ? c.ev().depth + 1 : 255);
  ev.start = ev.end = c.ev().end;
  ev.callsite = c.ev().callsite;
  auto a = mpi_args_mut(ev);
  a.comm() = id;
  a.peer() = peer;
  a.direction() = direction;
  record_event(ev);
}

// In and out neighbours in MPI's order (MPI-4 §8.6): per dimension the rank
// below then the one above (MPI_PROC_NULL off a non-periodic edge); a graph's
// neighbours are both; a distributed graph's are its sources and destinations.
bool neighbors(MPI_Comm comm, int kind, std::vector<int>& in, std::vector<int>& out) {
  if (kind == MPI_CART) {
    int ndims = 0;
    if (pmpi::Cartdim_get(comm, &ndims) != MPI_SUCCESS) return false;
    for (int d = 0; d < ndims; ++d) {
      int below = MPI_PROC_NULL, above = MPI_PROC_NULL;
      if (pmpi::Cart_shift(comm, d, 1, &below, &above) != MPI_SUCCESS) return false;
      in.push_back(below), in.push_back(above);
    }
    out = in;
    return true;
  }
  if (kind == MPI_GRAPH) {
    int me = 0, n = 0;
    pmpi::Comm_rank(comm, &me);
    if (pmpi::Graph_neighbors_count(comm, me, &n) != MPI_SUCCESS || n < 0) return false;
    in.resize(size_t(n));
    if (n > 0 && pmpi::Graph_neighbors(comm, me, n, in.data()) != MPI_SUCCESS) return false;
    out = in;
    return true;
  }
  if (kind == MPI_DIST_GRAPH) {
    int nin = 0, nout = 0, weighted = 0;
    if (pmpi::Dist_graph_neighbors_count(comm, &nin, &nout, &weighted) != MPI_SUCCESS) return false;
    // Room for weights whether or not the graph has them (MPI ignores it then).
    in.resize(size_t(nin) + 1), out.resize(size_t(nout) + 1);
    std::vector<int> win(size_t(nin) + 1), wout(size_t(nout) + 1);
    bool ok =
        pmpi::Dist_graph_neighbors(comm, nin, in.data(), win.data(), nout, out.data(), wout.data()) == MPI_SUCCESS;
    in.resize(size_t(nin)), out.resize(size_t(nout));
    return ok;
  }
  return false;
}

}  // namespace

int64_t inter_root(MPI_Comm comm, int32_t id, int root, int32_t* begin, int32_t* remote) noexcept {
  int me = 0, size = 0;
  pmpi::Comm_rank(comm, &me);
  pmpi::Comm_remote_size(comm, &size);
  *begin = state().remote_offset(id);  // 0: the remote group is listed first
  *remote = size;
  if (root == MPI_ROOT) return (*begin == 0 ? size : 0) + me;
  return root == MPI_PROC_NULL ? kProcNull : int64_t(root) + *begin;
}

void fill_inter_root(Call& c, MPI_Comm comm, int32_t id, int root) noexcept {
  int32_t begin = 0, remote = 0;
  auto& ev = c.ev();
  auto a = mpi_args_mut(ev);
  a.root() = inter_root(comm, id, root, &begin, &remote);
  a.remote_begin() = begin;
  a.remote_size() = remote;
}

void record_topology(Call& c, MPI_Comm comm, int32_t id) noexcept {
  if (id < 0 || comm == MPI_COMM_NULL) return;
  TracerGuard guard;
  int kind = MPI_UNDEFINED;
  if (pmpi::Topo_test(comm, &kind) != MPI_SUCCESS || kind == MPI_UNDEFINED) return;
  try {
    std::vector<int> in, out;
    if (!neighbors(comm, kind, in, out)) return;
    for (int p : in) record_neighbor(c, id, norm_peer(p), kNeighborIn);
    for (int p : out) record_neighbor(c, id, norm_peer(p), kNeighborOut);
  } catch (...) {
  }
}

}  // namespace mpior::preload::mpi
