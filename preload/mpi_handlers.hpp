// Recording hooks for MPI calls. Each gets the real call as a callable and
// runs it itself; a '&' argument in trace/api/mpi.list (a status pointer) is
// passed to that callable so a handler can supply its own status when the
// application passed MPI_STATUS(ES)_IGNORE. Requests completed by Wait/Test
// calls are recorded as mpior_complete records nested under the call.
#pragma once

#include <array>
#include <vector>

#include "preload/call.hpp"
#include "preload/mpi_abi.hpp"
#include "preload/mpi_pruning.hpp"
#include "preload/mpi_state.hpp"
#include "trace/event.hpp"
#include "trace/inter_request.hpp"

namespace mpior::preload::mpi {

namespace expr {
using trace::CommOrigin;
using trace::kReqRecv;
using trace::kReqSend;
using trace::OpClass;
int64_t type_size(MPI_Datatype t);
template <typename Count>
int64_t tbytes(Count count, MPI_Datatype t) {
  return int64_t(count) * type_size(t);
}
inline bool in_place(const void* p) { return p == MPI_IN_PLACE; }
int64_t comm_size(MPI_Comm c);
// The ranks an alltoall-family call exchanges with: its per-peer count and
// type arrays have the remote group's size on an intercommunicator.
int64_t peer_count(MPI_Comm c);
template <typename Count>
int64_t sum_counts(const Count* counts, int64_t n) {
  int64_t total = 0;
  for (int64_t i = 0; counts && i < n; ++i) total += int64_t(counts[i]);
  return total;
}
// Alltoallw: sum of counts[i] x size of types[i].
template <typename Count>
int64_t sum_typed(const Count* counts, const MPI_Datatype* types, int64_t n) {
  int64_t total = 0;
  for (int64_t i = 0; counts && types && i < n; ++i) total += int64_t(counts[i]) * type_size(types[i]);
  return total;
}
}  // namespace expr

// Lifecycle (session.cpp).
void session_mpi_init(int thread_level) noexcept;
void session_mpi_finalize() noexcept;
void session_mpi_abort() noexcept;
void session_sessions_init() noexcept;
void session_sessions_finalize() noexcept;

// Handler bodies that do not depend on the callable (mpi_handlers.cpp).
void fill_p2p(Call& c, int rc, MPI_Comm comm, int peer, int tag, int64_t bytes) noexcept;
// The same for the communicator with local id `id` (already looked up).
void fill_p2p_on(Call& c, int rc, int32_t id, int peer, int tag, int64_t bytes) noexcept;
void fill_recv_status(Call& c, const MPI_Status& st) noexcept;
int64_t add_request(MPI_Request r, MPI_Comm comm, int peer, int tag, int64_t bytes, int64_t kind,
                    bool logged = true) noexcept;
// One completion record under the call c, for a request the tracer knew (or not).
void record_completion(Call& c, const RequestInfo& info, const MPI_Status* st, bool cancelled = false) noexcept;
// id: the communicator's local id (the wrapper looked it up before the call).
void fill_collective(Call& c, int rc, int32_t id, int64_t root, int64_t bytes) noexcept;
// A communicator with a topology: this rank's neighbours in it, recorded
// under c (mpior_neighbor; mpi_topology.cpp).
void record_topology(Call& c, MPI_Comm comm, int32_t id) noexcept;
// A rooted collective on intercommunicator `id`: root, remote_begin, remote_size.
void fill_inter_root(Call& c, MPI_Comm comm, int32_t id, int root) noexcept;
// The root's place in intercommunicator id's members (kProcNull for the root's
// group's other members), where the remote group starts and its size.
int64_t inter_root(MPI_Comm comm, int32_t id, int root, int32_t* begin, int32_t* remote) noexcept;

// The records of a rooted collective request on an intercommunicator
// (arg::coll_remote_size, flag::remote_first).
inline void fill_remote(trace::RawEvent& ev, const RequestInfo& info) noexcept {
  if (info.kind != trace::kReqColl || info.remote <= 0) return;
  ev.args[trace::arg::coll_remote_size] = info.remote;
  if (info.remote_first) ev.flags |= trace::flag::remote_first;
}

// Room for statuses when the application ignores them
// (MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE).
class StatusBuffer {
 public:
  MPI_Status* get(MPI_Status* app, int n);

 private:
  std::array<MPI_Status, 16> small_;
  std::vector<MPI_Status> large_;
};

// The request handles as they were before a Wait/Test call.
class RequestSnapshot {
 public:
  RequestSnapshot(const MPI_Request* requests, int n);
  RequestSnapshot(const RequestSnapshot&) = delete;
  RequestSnapshot& operator=(const RequestSnapshot&) = delete;
  MPI_Request operator[](int i) const { return data_[i]; }

 private:
  std::array<MPI_Request, 16> small_;
  std::vector<MPI_Request> large_;
  MPI_Request* data_;
};

template <typename Invoke>
int mpi_init(Call& c, Invoke&& invoke, int*, char***, int required, int*) {
  int rc = invoke();
  c.stop();
  if (rc == MPI_SUCCESS) session_mpi_init(required);
  c.ev().ret = rc;
  return rc;
}

// The record goes in before the trace is written, inside this call; MPI's
// own teardown then runs untraced.
template <typename Invoke>
int mpi_finalize(Call& c, Invoke&& invoke) {
  c.stop();
  record_event(c.ev());
  c.drop();
  session_mpi_finalize();
  return invoke();
}

// MPI_Abort ends the job without returning: this rank's trace is written
// first (the other ranks are killed; their signal handlers write theirs).
template <typename Invoke>
int mpi_abort(Call& c, Invoke&& invoke) {
  c.drop();
  session_mpi_abort();
  return invoke();
}

template <typename Invoke>
int p2p_send(Call& c, Invoke&& invoke, MPI_Comm comm, int dest, int tag, int64_t bytes) {
  int32_t id = state().comm_id(comm);
  bool log = gate_send(c, id, dest, tag, bytes, false);
  int rc = invoke();
  c.stop();
  fill_p2p_on(c, rc, id, dest, tag, bytes);
  if (!log) prune(c);
  return rc;
}

template <typename Invoke>
int p2p_isend(Call& c, Invoke&& invoke, MPI_Comm comm, int dest, int tag, int64_t bytes, MPI_Request* request) {
  bool log = gate_send(c, state().comm_id(comm), dest, tag, bytes, false);
  int rc = invoke();
  c.stop();
  fill_p2p(c, rc, comm, dest, tag, bytes);
  if (rc == MPI_SUCCESS)
    c.ev().args[trace::arg::request] = add_request(*request, comm, dest, tag, bytes, trace::kReqSend, log);
  if (!log) prune(c);
  return rc;
}

template <typename Invoke>
int p2p_recv(Call& c, Invoke&& invoke, MPI_Comm comm, int source, int tag, MPI_Datatype, MPI_Status* status) {
  StatusBuffer buf;
  MPI_Status* st = buf.get(status, 1);
  int rc = invoke(st);
  c.stop();
  int32_t id = state().comm_id(comm);
  fill_p2p_on(c, rc, id, source, tag, 0);
  if (rc != MPI_SUCCESS) return rc;
  fill_recv_status(c, *st);
  piggyback::Received r = gate_receive(c, id, MPI_REQUEST_NULL, *st);
  if (r.on_behalf) record_on_behalf(c, id, *st, r.aux);
  if (!r.log) prune(c);
  return rc;
}

template <typename Invoke>
int p2p_irecv(Call& c, Invoke&& invoke, MPI_Comm comm, int source, int tag, int64_t bytes, MPI_Request* request) {
  int rc = invoke();
  c.stop();
  fill_p2p(c, rc, comm, source, tag, bytes);
  if (rc != MPI_SUCCESS) return rc;
  c.ev().args[trace::arg::request] = add_request(*request, comm, source, tag, bytes, trace::kReqRecv);
  int32_t id = state().comm_id(comm);
  if (pruning(id)) piggyback::pruner().receive_posted(id, *request, source, tag);
  return rc;
}

// Always logged: its send half tells the receiver so, whatever its receive
// half turns out to need.
template <typename Invoke>
int sendrecv(Call& c, Invoke&& invoke, MPI_Comm comm, int dest, int sendtag, int64_t sendbytes, int source, int recvtag,
             MPI_Datatype, MPI_Status* status) {
  StatusBuffer buf;
  MPI_Status* st = buf.get(status, 1);
  int32_t id = state().comm_id(comm);
  gate_send(c, id, dest, sendtag, sendbytes, true);
  int rc = invoke(st);
  c.stop();
  fill_p2p(c, rc, comm, dest, sendtag, sendbytes);
  c.ev().args[trace::arg::peer2] = state().peer_of(id, source);
  c.ev().args[trace::arg::tag2] = norm_tag(recvtag);
  if (rc != MPI_SUCCESS) return rc;
  fill_recv_status(c, *st);
  c.ev().args[trace::arg::bytes] = sendbytes;
  piggyback::Received r = gate_receive(c, id, MPI_REQUEST_NULL, *st);
  if (r.on_behalf) record_on_behalf(c, id, *st, r.aux);
  return rc;
}

// One request a Wait/Test call completed: decides whether it is kept (a
// receive asks its auxiliary message; a send was decided when posted) and
// records it. Returns whether it was kept.
bool settle_completion(Call& c, MPI_Request handle, const MPI_Status* st) noexcept;

// The shape every Wait/Test call shares: remember the requests (completion
// sets them to MPI_REQUEST_NULL), run the call with statuses the tracer can
// read, then record one completion per request it completed. `completed`
// gets the statuses and an emit(request index, status) to call for each.
template <typename Invoke, typename Completed>
int complete(Call& c, Invoke&& invoke, int nrequests, const MPI_Request* requests, int nstatuses, MPI_Status* statuses,
             Completed&& completed) {
  StatusBuffer buf;
  MPI_Status* st = buf.get(statuses, nstatuses);
  RequestSnapshot before(requests, nrequests);
  int rc = invoke(st);
  c.stop();
  c.ev().ret = rc;
  bool kept = false;
  if (rc == MPI_SUCCESS)
    completed(st, [&](int i, const MPI_Status* s) {
      if (i >= 0 && i < nrequests && before[i] != MPI_REQUEST_NULL) kept = settle_completion(c, before[i], s) || kept;
    });
  // A call that completed nothing kept is synchronisation pruned with it.
  if (!kept && piggyback::pruner().active() && c.ev().depth == 0) prune(c);
  return rc;
}

template <typename Invoke>
int wait_one(Call& c, Invoke&& invoke, MPI_Request* request, MPI_Status* status) {
  return complete(c, invoke, 1, request, 1, status, [](MPI_Status* st, auto emit) { emit(0, st); });
}

template <typename Invoke>
int wait_all(Call& c, Invoke&& invoke, int count, MPI_Request* requests, MPI_Status* statuses) {
  return complete(c, invoke, count, requests, count, statuses, [count](MPI_Status* st, auto emit) {
    for (int i = 0; i < count; ++i) emit(i, &st[i]);
  });
}

template <typename Invoke>
int wait_any(Call& c, Invoke&& invoke, int count, MPI_Request* requests, int* index, MPI_Status* status) {
  return complete(c, invoke, count, requests, 1, status, [index](MPI_Status* st, auto emit) {
    if (*index != MPI_UNDEFINED) emit(*index, st);
  });
}

template <typename Invoke>
int wait_some(Call& c, Invoke&& invoke, int incount, MPI_Request* requests, int* outcount, int* indices,
              MPI_Status* statuses) {
  return complete(c, invoke, incount, requests, incount, statuses, [outcount, indices](MPI_Status* st, auto emit) {
    if (*outcount != MPI_UNDEFINED)
      for (int k = 0; k < *outcount; ++k) emit(indices[k], &st[k]);
  });
}

template <typename Invoke>
int test_one(Call& c, Invoke&& invoke, MPI_Request* request, int* flag, MPI_Status* status) {
  return complete(c, invoke, 1, request, 1, status, [flag](MPI_Status* st, auto emit) {
    if (*flag) emit(0, st);
  });
}

template <typename Invoke>
int test_all(Call& c, Invoke&& invoke, int count, MPI_Request* requests, int* flag, MPI_Status* statuses) {
  return complete(c, invoke, count, requests, count, statuses, [count, flag](MPI_Status* st, auto emit) {
    if (*flag)
      for (int i = 0; i < count; ++i) emit(i, &st[i]);
  });
}

template <typename Invoke>
int test_any(Call& c, Invoke&& invoke, int count, MPI_Request* requests, int* index, int* flag, MPI_Status* status) {
  return complete(c, invoke, count, requests, 1, status, [index, flag](MPI_Status* st, auto emit) {
    if (*flag && *index != MPI_UNDEFINED) emit(*index, st);
  });
}

// The real call, then its pruning decision: the exchange posted and waited
// after the call (or on a communicator of one made there: decides_alone,
// decide_alone). Returns whether to log the call. Only the real call is
// timed, and it runs alone: the lookups, the posting and the wait are the
// tracer's time. Timing the exchange with the call and trimming it by a
// figure measured at MPI_Init misjudges short collectives both ways, and an
// exchange posted before the call progresses inside it and lengthens it.
// The call starts again just before it: what the wrapper and handler did
// first (the communicator's and the type's lookups) would otherwise lengthen
// a pruned collective, which the replay passes as computation.
template <typename Invoke>
bool decided_call(Call& c, int32_t id, int root, piggyback::DecisionExchange& x, Invoke&& invoke) {
  c.restart();
  invoke();
  c.stop();
  if (decides_alone(id)) return decide_alone(c, root);
  begin_decision(c, id, root, x);
  return end_decision(c, id, x);
}

// All to all.
// id: comm's local id, where the caller has it.
template <typename Invoke>
int coll_on(Call& c, Invoke&& invoke, int32_t id, int64_t bytes) {
  piggyback::DecisionExchange decision;
  int rc = MPI_SUCCESS;
  bool log = decided_call(c, id, -1, decision, [&] { rc = invoke(); });
  fill_collective(c, rc, id, -1, bytes);
  if (!log) prune(c);
  return rc;
}

template <typename Invoke>
int coll(Call& c, Invoke&& invoke, MPI_Comm comm, int64_t bytes) {
  return coll_on(c, invoke, state().comm_id(comm), bytes);
}

// On an intercommunicator (no pruning there) the root is its position in
// the members list, kProcNull for the other members of its group (MPI_ROOT,
// MPI_PROC_NULL), with the caller's remote group beside it
// (fill_inter_root): the replay has the root and the other group exchange.
template <typename Invoke>
int coll_rooted_on(Call& c, Invoke&& invoke, MPI_Comm comm, int32_t id, int root, int64_t bytes) {
  bool inter = state().is_inter(id);
  int decided = inter ? -1 : root;
  piggyback::DecisionExchange decision;
  int rc = MPI_SUCCESS;
  bool log = decided_call(c, id, decided, decision, [&] { rc = invoke(); });
  fill_collective(c, rc, id, decided, bytes);
  if (inter)
    fill_inter_root(c, comm, id, root);
  else if (root < 0)
    c.ev().args[trace::arg::root] = -1;
  if (!log) prune_rooted(c, decision);
  return rc;
}

template <typename Invoke>
int coll_rooted(Call& c, Invoke&& invoke, MPI_Comm comm, int root, int64_t bytes) {
  return coll_rooted_on(c, invoke, comm, state().comm_id(comm), root, bytes);
}

template <typename Invoke>
int comm_derive(Call& c, Invoke&& invoke, MPI_Comm parent, MPI_Comm* newcomm, trace::CommOrigin origin, int64_t color,
                int64_t key) {
  int rc = invoke();
  c.stop();
  int32_t parent_id = state().comm_id(parent);
  uint64_t seq = state().next_collective(parent_id);
  int32_t id = -1;
  if (rc == MPI_SUCCESS && *newcomm != MPI_COMM_NULL)
    id = state().add_comm(*newcomm, origin, parent_id, seq, color, key);
  comm_made(parent_id, seq, id, id >= 0 ? *newcomm : MPI_COMM_NULL);
  if (id >= 0) record_topology(c, *newcomm, id);
  auto& ev = c.ev();
  ev.args[trace::arg::comm] = parent_id;
  ev.args[trace::arg::newcomm] = id;
  // The instance also where no communicator is made (MPI_COMM_NULL: a split
  // with MPI_UNDEFINED), so every member numbers it alike.
  ev.args[trace::arg::create_seq] = int64_t(seq);
  ev.ret = rc;
  return rc;
}

template <typename Invoke>
int comm_free(Call& c, Invoke&& invoke, MPI_Comm* comm) {
  MPI_Comm before = *comm;
  int32_t id = state().comm_id(before);
  comm_unmade(id);
  int rc = invoke();
  c.stop();
  c.ev().args[trace::arg::coll_seq] = int64_t(state().next_collective(id));
  state().forget_comm(before);
  c.ev().args[trace::arg::comm] = id;
  c.ev().ret = rc;
  return rc;
}

}  // namespace mpior::preload::mpi

#include "preload/mpi_inline.hpp"
#include "preload/mpi_more.hpp"
