// What the tracer knows about the application's MPI objects: its
// communicators (rank-local ids, members, collective counts) and its pending
// requests. Also the few PMPI functions the tracer calls for itself.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "preload/mpi_abi.hpp"
#include "trace/event.hpp"
#include "trace/format.hpp"
#include "trace/model.hpp"

namespace mpior::preload::mpi {

// PMPI functions the tracer calls itself, resolved with dlsym on first MPI
// use (libmpior.so does not link MPI: non-MPI programs never load it).
// clang-format off
#define MPIOR_PMPI_HELPERS(X)                                                                   \
  X(Comm_rank) X(Comm_size) X(Comm_group) X(Comm_test_inter) X(Group_translate_ranks)        \
  X(Group_size) X(Group_free) X(Type_size_x) X(Type_get_envelope) X(Comm_dup) X(Comm_free) \
  X(Bcast) X(Gather) X(Initialized) X(Finalized) X(Isend) X(Irecv) X(Wait) X(Waitall)       \
  X(Recv) X(Allreduce) X(Barrier) X(Test) X(Request_get_status) X(Test_cancelled) X(Query_thread)         \
  X(Iallreduce) X(Ibcast) X(Igather) X(Comm_create_group) X(Comm_remote_group) X(Comm_remote_size) \
  X(Iprobe) X(Cancel) X(Request_free) X(Comm_compare) X(Comm_create) X(Comm_split) X(Comm_split_type) X(Send) \
  X(Type_get_extent_x) X(Type_get_true_extent_x) X(Pack) X(Unpack) \
  X(Topo_test) X(Cartdim_get) X(Cart_shift) X(Graph_neighbors_count) X(Graph_neighbors)                \
  X(Dist_graph_neighbors_count) X(Dist_graph_neighbors)                                       \
  X(Comm_set_errhandler) X(Get_library_version) X(Start) X(Allgather) X(Win_allocate_shared) X(Win_shared_query) X(Win_free) X(Win_lock_all) X(Win_unlock_all)
// MPI-4 (Sessions): MPICH 4 has them, Open MPI 4.1 does not. Optional.
#if MPI_VERSION >= 4
#define MPIOR_HAVE_SESSIONS 1
#define MPIOR_PMPI_MPI4_HELPERS(X) \
  X(Session_init) X(Session_finalize) X(Group_from_session_pset) X(Comm_create_from_group) \
  X(Bcast_init) X(Allreduce_init)
#else
#define MPIOR_HAVE_SESSIONS 0
#define MPIOR_PMPI_MPI4_HELPERS(X)
#endif
// clang-format on

namespace pmpi {
#define MPIOR_PMPI_DECL(name) extern decltype(&::PMPI_##name) name;
MPIOR_PMPI_HELPERS(MPIOR_PMPI_DECL)
MPIOR_PMPI_MPI4_HELPERS(MPIOR_PMPI_DECL)
#undef MPIOR_PMPI_DECL
// Resolves the helpers; false when MPI is not loaded.
bool resolve() noexcept;
}  // namespace pmpi

// Normalised peers and tags (trace::kAnySource, kProcNull, kAnyTag).
int64_t norm_peer(int peer);
int64_t norm_tag(int tag);

struct RequestInfo {
  int64_t id = -1;
  int32_t comm = -1;
  int64_t peer = 0;
  int64_t tag = 0;
  int64_t bytes = 0;
  int64_t kind = 0;           // trace::kReqSend, kReqRecv
  bool logged = true;         // sends: the sender's decision when it posted the send
  bool matched = false;       // receives of a matched probe (Imrecv): decided at the probe
  int64_t root = -1;          // collectives (kReqColl): the root, -1 none
  int64_t op = 0;             // collectives: the trace::OpClass
  int64_t seq = 0;            // collectives: the collective count on comm
  int32_t newcomm = -1;       // MPI_Comm_idup: the new communicator's local id
  bool neighbor = false;      // collectives: a neighbourhood collective (flag::neighbor)
  int32_t remote = 0;         // rooted collectives on an intercommunicator: the remote group's size
  bool remote_first = false;  // ... listed first in the members (flag::remote_first)
  bool partitioned = false;   // MPI_Psend_init, MPI_Precv_init: never pruned (no auxiliary message)
  bool given_status = false;  // receives whose MPI status is not set (Precv, Isendrecv): the peer and tag asked
};

class MpiState {
 public:
  // World and self, once MPI is initialised.
  void init(int world_rank, int world_size);
  int world_rank() const { return world_rank_; }
  int world_size() const { return world_size_; }

  // Local id of a communicator, registering one never seen (origin unknown).
  int32_t comm_id(MPI_Comm c);
  int32_t add_comm(MPI_Comm c, trace::CommOrigin origin, int32_t parent, uint64_t parent_seq, int64_t color,
                   int64_t key);
  // MPI_Comm_idup: the new communicator has the parent's members (and is not
  // to be asked for them before its request completes).
  int32_t add_comm_like(MPI_Comm c, int32_t parent, uint64_t parent_seq);
  void forget_comm(MPI_Comm c);
  // Number of collectives on the communicator before this one.
  uint64_t next_collective(int32_t id);
  std::vector<trace::CommEntry> comms();
  // Appends to *out the entries it does not hold yet (the flush's table,
  // encoded once per entry: comms() copies the whole table).
  void encode_comms(trace::EncodedComms* out);
  // Members (world ranks, in communicator rank order); empty when unknown.
  // The reference stays valid: entries are never moved.
  const std::vector<int32_t>& members(int32_t id);
  int32_t world_of(int32_t id, int64_t comm_rank);

  // Intercommunicators: the position of a remote-group rank in the members
  // list (0 for intracommunicators: comm ranks are positions).
  int32_t remote_offset(int32_t id);
  int64_t peer_of(int32_t id, int peer) {
    int64_t p = norm_peer(peer);
    return p >= 0 ? p + remote_offset(id) : p;
  }
  bool is_inter(int32_t id);
  struct Shape {
    int32_t offset;  // remote_offset
    bool inter;
  };
  // Sessions (no MPI_COMM_WORLD): the world group members are translated into.
  void set_world_group(MPI_Group g) { world_group_ = g; }

  int64_t add_request(MPI_Request r, const RequestInfo& info);
  // Persistent requests: what every start of one does (kept until freed).
  void add_persistent(MPI_Request r, const RequestInfo& info);
  bool persistent(MPI_Request r, RequestInfo* info);
  void forget_persistent(MPI_Request r);
  // Matched probes: the message's communicator and what the probe decided.
  void add_message(MPI_Message m, const RequestInfo& info);
  RequestInfo take_message(MPI_Message m);
  // Removes and returns what is known of a request (id -1 when unknown).
  RequestInfo take_request(MPI_Request r);
  RequestInfo peek_request(MPI_Request r);

 private:
  std::vector<int32_t> members_of(MPI_Comm c, int32_t* offset);
  std::vector<int32_t> translate(MPI_Group g);
  Shape shape(int32_t id);
  Shape shape_locked(int32_t id);
  std::atomic<uint64_t>* collectives_of(int32_t id);
  std::mutex mutex_;
  MPI_Group world_group_ = MPI_GROUP_NULL;
  std::vector<int32_t> remote_offset_;  // per comm id
  std::vector<uint8_t> inter_;          // per comm id: an intercommunicator
  std::unordered_map<MPI_Request, RequestInfo> persistent_;
  std::unordered_map<MPI_Message, RequestInfo> messages_;
  std::atomic<uint32_t> generation_{1};  // bumped when a communicator is freed
  int world_rank_ = 0, world_size_ = 1;
  std::unordered_map<MPI_Comm, int32_t> comm_ids_;
  std::deque<trace::CommEntry> comms_;
  std::deque<std::atomic<uint64_t>> collectives_;  // per comm id (a deque: the entries stay put)
  // A handle may stand for several requests at once: MPICH gives every send
  // that completed at once the same handle. Those complete in posting order.
  std::unordered_map<MPI_Request, std::deque<RequestInfo>> requests_;
  int64_t next_request_ = 1;
};

// Inline: the tracer asks for it several times in each MPI call.
__attribute__((always_inline)) inline MpiState& state() {
  static auto* s = new MpiState();
  return *s;
}

}  // namespace mpior::preload::mpi
