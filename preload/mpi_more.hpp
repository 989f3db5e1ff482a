// Handlers for the MPI calls beyond plain point to point and blocking
// collectives: persistent requests (made once, started many times),
// nonblocking and persistent collectives (completed, and replayed, at their
// Wait/Test), matched probes, cancel and free, generalized requests,
// communicators made over groups or nonblocking, and MPI-4 Sessions.
// Included by mpi_handlers.hpp.
#pragma once

namespace mpior::preload::mpi {

// Back from the normalised values to MPI's (for the pruner, which speaks MPI).
int raw_peer(int64_t peer) noexcept;
int raw_tag(int64_t tag) noexcept;

// Fills c's record from a request's description (start, icoll, pinit records).
void fill_request_record(Call& c, int rc, const RequestInfo& info) noexcept;
// A collective request's description (nonblocking or persistent).
RequestInfo collective_info(MPI_Comm comm, int root, int64_t bytes, trace::OpClass op) noexcept;
// Records one start of a persistent request (MPI_Start, each of
// MPI_Startall's): `first` takes the call's own record, the others follow it.
// A persistent collective's start carries its held decision (else null).
void record_start(Call& c, int rc, MPI_Request r, const RequestInfo& info, bool logged, bool first,
                  std::unique_ptr<piggyback::HeldCollective> decision) noexcept;
// Before the real start: the pruner's decision for a persistent send.
bool gate_start(Call& c, const RequestInfo& info) noexcept;
// A matched probe found a message: its communicator and the receive's fate.
void probe_matched_message(Call& c, MPI_Comm comm, MPI_Message m, const MPI_Status& st) noexcept;

// A persistent send or receive (partitioned: of all its partitions, see part_init).
template <typename Invoke>
int p2p_init(Call& c, Invoke&& invoke, MPI_Comm comm, int peer, int tag, int64_t bytes, int64_t kind,
             MPI_Request* request, bool partitioned = false) {
  int rc = invoke();
  c.stop();
  fill_p2p(c, rc, comm, peer, tag, bytes);
  c.ev().args[trace::arg::req_kind] = kind;
  if (rc == MPI_SUCCESS) {
    RequestInfo info;
    info.comm = state().comm_id(comm);
    info.peer = state().peer_of(info.comm, peer);
    info.tag = norm_tag(tag);
    info.bytes = bytes;
    info.kind = kind;
    if (partitioned) {
      info.partitioned = true;
      info.matched = kind == trace::kReqRecv;  // its completion asks no auxiliary message
      info.given_status = kind == trace::kReqRecv;
    }
    state().add_persistent(*request, info);
  }
  return rc;
}

template <typename Invoke>
int coll_init(Call& c, Invoke&& invoke, MPI_Comm comm, int root, int64_t bytes, trace::OpClass op,
              MPI_Request* request) {
  int rc = invoke();
  c.stop();
  RequestInfo info = collective_info(comm, root, bytes, op);
  fill_request_record(c, rc, info);
  if (rc == MPI_SUCCESS) {
    state().add_persistent(*request, info);
    init_collective_decision(info, *request);
  }
  return rc;
}

// Every start gets a request id of its own; a persistent collective's start
// is one more collective on its communicator.
template <typename Invoke>
int start(Call& c, Invoke&& invoke, int count, MPI_Request* requests) {
  if (count <= 0) return invoke();
  std::vector<RequestInfo> infos(static_cast<size_t>(count));
  std::vector<uint8_t> logged(static_cast<size_t>(count), 1);
  std::vector<std::unique_ptr<piggyback::HeldCollective>> decisions(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    if (!state().persistent(requests[i], &infos[size_t(i)])) continue;
    if (infos[size_t(i)].kind == trace::kReqSend && !infos[size_t(i)].partitioned)
      logged[size_t(i)] = gate_start(c, infos[size_t(i)]);
    if (infos[size_t(i)].kind == trace::kReqColl)
      decisions[size_t(i)] = post_collective_decision(c, infos[size_t(i)], requests[i]);
  }
  RequestSnapshot handles(requests, count);
  int rc = invoke();
  c.stop();
  for (int i = 0; i < count; ++i)
    record_start(c, rc, handles[i], infos[size_t(i)], logged[size_t(i)], i == 0, std::move(decisions[size_t(i)]));
  return rc;
}

// Pruned by its dependency class, decided where it completes (pruning.hpp).
template <typename Invoke>
int icoll(Call& c, Invoke&& invoke, MPI_Comm comm, int root, int64_t bytes, trace::OpClass op, MPI_Request* request) {
  RequestInfo info = collective_info(comm, root, bytes, op);
  auto decision = post_collective_decision(c, info);
  int rc = invoke();
  c.stop();
  info.seq = int64_t(state().next_collective(info.comm));
  if (rc == MPI_SUCCESS) info.id = state().add_request(*request, info);
  fill_request_record(c, rc, info);
  if (!hold_collective_decision(std::move(decision), rc, rc == MPI_SUCCESS ? *request : MPI_REQUEST_NULL, c.ev()))
    c.drop();
  return rc;
}

// Neighborhood collectives: every member calls, only neighbours exchange.
// Pruned as all to all: the decision of every member, so any member's I/O
// keeps the call on every member; the replay then exchanges only between
// neighbours (flag::neighbor, the topology's mpior_neighbor records).
template <typename Invoke>
int coll_neighbor(Call& c, Invoke&& invoke, MPI_Comm comm, int64_t bytes) {
  int rc = coll(c, invoke, comm, bytes);
  c.ev().flags |= trace::flag::neighbor;
  return rc;
}

template <typename Invoke>
int icoll_neighbor(Call& c, Invoke&& invoke, MPI_Comm comm, int64_t bytes, MPI_Request* request) {
  int rc = invoke();
  c.stop();
  RequestInfo info = collective_info(comm, -1, bytes, trace::OpClass::allcoll);
  info.neighbor = true;
  info.seq = int64_t(state().next_collective(info.comm));
  if (rc == MPI_SUCCESS) info.id = state().add_request(*request, info);
  fill_request_record(c, rc, info);
  return rc;
}

template <typename Invoke>
int coll_init_neighbor(Call& c, Invoke&& invoke, MPI_Comm comm, int64_t bytes, MPI_Request* request) {
  int rc = invoke();
  c.stop();
  RequestInfo info = collective_info(comm, -1, bytes, trace::OpClass::allcoll);
  info.neighbor = true;
  fill_request_record(c, rc, info);
  if (rc == MPI_SUCCESS) {
    state().add_persistent(*request, info);
    init_collective_decision(info, *request);
  }
  return rc;
}

// MPI-4 nonblocking send-receive: the send half is an isend, always logged
// (like MPI_Sendrecv); the request completes as the receive half
// (flag::recv_too; peer2 and isr_tag name it).
template <typename Invoke>
int isendrecv(Call& c, Invoke&& invoke, MPI_Comm comm, int dest, int sendtag, int64_t sendbytes, int source,
              int recvtag, int64_t recvbytes, MPI_Request* request) {
  int32_t id = state().comm_id(comm);
  gate_send(c, id, dest, sendtag, sendbytes, true);
  int rc = invoke();
  c.stop();
  fill_p2p(c, rc, comm, dest, sendtag, sendbytes);
  auto& ev = c.ev();
  ev.flags |= trace::flag::recv_too;
  ev.args[trace::arg::peer2] = state().peer_of(id, source);
  ev.args[trace::arg::isr_tag] = norm_tag(recvtag);
  if (rc != MPI_SUCCESS) return rc;
  RequestInfo info;
  info.comm = id;
  info.peer = state().peer_of(id, source);
  info.tag = norm_tag(recvtag);
  info.bytes = recvbytes;
  info.kind = trace::kReqRecv;
  info.given_status = true;
  ev.args[trace::arg::request] = state().add_request(*request, info);
  if (pruning(id)) piggyback::pruner().receive_posted(id, *request, source, recvtag);
  return rc;
}

// Partitioned communication (MPI-4): a persistent send or receive of all the
// partitions; each start is one message. Never pruned: no auxiliary message
// goes with it (Pready/Parrived are recorded as request notes).
template <typename Invoke>
int part_init(Call& c, Invoke&& invoke, MPI_Comm comm, int peer, int tag, int64_t bytes, int64_t kind,
              MPI_Request* request) {
  return p2p_init(c, invoke, comm, peer, tag, bytes, kind, request, true);
}

template <typename Invoke>
int cancel(Call& c, Invoke&& invoke, MPI_Request* request) {
  RequestInfo info = state().peek_request(*request);
  int rc = invoke();
  c.stop();
  c.ev().args[trace::arg::comm] = info.comm;
  c.ev().args[trace::arg::req_kind] = info.kind;
  c.ev().args[trace::arg::request] = info.id;
  c.ev().ret = rc;
  return rc;
}

// A freed request completes unseen: an active receive's message is no longer
// expected in order, a persistent request is forgotten.
template <typename Invoke>
int request_free(Call& c, Invoke&& invoke, MPI_Request* request) {
  MPI_Request before = *request;
  RequestInfo info = state().peek_request(before);
  int rc = invoke();
  c.stop();
  if (rc == MPI_SUCCESS) {
    if (info.id >= 0) state().take_request(before);
    if (info.kind == trace::kReqColl && piggyback::pruner().active()) piggyback::pruner().drop_held(handle_key(before));
    if (piggyback::pruner().active()) piggyback::pruner().persistent_free(handle_key(before));
    if (info.kind == trace::kReqRecv && !info.matched && pruning(info.comm))
      piggyback::pruner().receive_dropped(info.comm, before);
    state().forget_persistent(before);
  }
  c.ev().args[trace::arg::comm] = info.comm;
  c.ev().args[trace::arg::req_kind] = info.kind;
  c.ev().args[trace::arg::request] = info.id;
  c.ev().ret = rc;
  return rc;
}

template <typename Invoke>
int grequest_start(Call& c, Invoke&& invoke, MPI_Request* request) {
  int rc = invoke();
  c.stop();
  c.ev().args[trace::arg::comm] = -1;
  c.ev().args[trace::arg::req_kind] = trace::kReqGen;
  if (rc == MPI_SUCCESS) {
    RequestInfo info;
    info.kind = trace::kReqGen;
    c.ev().args[trace::arg::request] = state().add_request(*request, info);
  }
  c.ev().ret = rc;
  return rc;
}

template <typename Invoke>
int request_note(Call& c, Invoke&& invoke, MPI_Request request) {
  RequestInfo info = state().peek_request(request);
  int rc = invoke();
  c.stop();
  c.ev().args[trace::arg::comm] = info.comm;
  c.ev().args[trace::arg::req_kind] = info.kind;
  c.ev().args[trace::arg::request] = info.id;
  c.ev().ret = rc;
  return rc;
}

// flag is nullptr for MPI_Mprobe. A probe that found nothing is dropped when
// pruning (a polling loop).
template <typename Invoke>
int mprobe(Call& c, Invoke&& invoke, int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
           MPI_Status* status) {
  StatusBuffer buf;
  MPI_Status* st = buf.get(status, 1);
  int rc = invoke(st);
  c.stop();
  fill_p2p(c, rc, comm, source, tag, 0);
  bool found = rc == MPI_SUCCESS && (!flag || *flag);
  if (!found) {
    if (piggyback::pruner().active()) prune(c);
    return rc;
  }
  fill_recv_status(c, *st);
  probe_matched_message(c, comm, *message, *st);
  return rc;
}

template <typename Invoke>
int mrecv(Call& c, Invoke&& invoke, MPI_Message* message, MPI_Status* status) {
  StatusBuffer buf;
  MPI_Status* st = buf.get(status, 1);
  MPI_Message m = *message;
  RequestInfo info = state().take_message(m);
  int rc = invoke(st);
  c.stop();
  auto& ev = c.ev();
  ev.args[trace::arg::comm] = info.comm;
  ev.args[trace::arg::peer] = info.peer;
  ev.args[trace::arg::tag] = info.tag;
  ev.ret = rc;
  if (rc != MPI_SUCCESS || m == MPI_MESSAGE_NO_PROC) return rc;
  fill_recv_status(c, *st);
  if (!info.logged) prune(c);
  return rc;
}

template <typename Invoke>
int imrecv(Call& c, Invoke&& invoke, int64_t bytes, MPI_Message* message, MPI_Request* request) {
  MPI_Message m = *message;
  RequestInfo info = state().take_message(m);
  int rc = invoke();
  c.stop();
  auto& ev = c.ev();
  ev.args[trace::arg::comm] = info.comm;
  ev.args[trace::arg::peer] = info.peer;
  ev.args[trace::arg::tag] = info.tag;
  ev.args[trace::arg::bytes] = bytes;
  ev.ret = rc;
  if (rc != MPI_SUCCESS) return rc;
  info.kind = trace::kReqRecv;
  info.bytes = bytes;
  info.matched = true;
  ev.args[trace::arg::request] = state().add_request(*request, info);
  return rc;
}

// Communicators made nonblocking: the dup has its parent's group, known at once.
template <typename Invoke>
int comm_idup(Call& c, Invoke&& invoke, MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  int rc = invoke();
  c.stop();
  int32_t parent = state().comm_id(comm);
  uint64_t seq = state().next_collective(parent);
  int32_t id = -1;
  if (rc == MPI_SUCCESS) id = state().add_comm_like(*newcomm, parent, seq);
  auto& ev = c.ev();
  ev.args[trace::arg::comm] = parent;
  ev.args[trace::arg::newcomm] = id;
  ev.ret = rc;
  if (rc == MPI_SUCCESS) {
    RequestInfo info;
    info.comm = parent;
    info.kind = trace::kReqComm;
    info.newcomm = id;
    state().add_request(*request, info);
  }
  return rc;
}

// Made by a call collective over a group (or two, for an intercommunicator),
// not over a communicator every member counts collectives on.
template <typename Invoke>
int comm_local(Call& c, Invoke&& invoke, MPI_Comm parent, MPI_Comm* newcomm, trace::CommOrigin origin) {
  int rc = invoke();
  c.stop();
  int32_t parent_id = parent == MPI_COMM_NULL ? -1 : state().comm_id(parent);
  int32_t id = -1;
  if (rc == MPI_SUCCESS && *newcomm != MPI_COMM_NULL) id = state().add_comm(*newcomm, origin, -1, 0, 0, 0);
  if (id >= 0) comm_made_local(id, *newcomm);
  auto& ev = c.ev();
  ev.args[trace::arg::comm] = parent_id;
  ev.args[trace::arg::newcomm] = id;
  ev.ret = rc;
  return rc;
}

template <typename Invoke>
int session_init(Call& c, Invoke&& invoke) {
  int rc = invoke();
  c.stop();
  if (rc == MPI_SUCCESS) session_sessions_init();
  c.ev().ret = rc;
  return rc;
}

template <typename Invoke>
int session_finalize(Call& c, Invoke&& invoke) {
  c.stop();
  c.ev().args[trace::arg::comm] = 0;
  record_event(c.ev());
  c.drop();
  session_sessions_finalize();
  return invoke();
}

}  // namespace mpior::preload::mpi
