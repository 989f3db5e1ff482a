#include "preload/mpi_handlers.hpp"
#include "preload/recorder.hpp"
#include "trace/arg_setters.hpp"

namespace mpior::preload::mpi {

using namespace trace;

int raw_peer(int64_t peer) noexcept {
  if (peer == kAnySource) return MPI_ANY_SOURCE;
  if (peer == kProcNull) return MPI_PROC_NULL;
  return int(peer);
}

int raw_tag(int64_t tag) noexcept { return tag == kAnyTag ? MPI_ANY_TAG : int(tag); }

// Slots of pinit, start and icoll records: comm, peer (collectives: the root,
// -1 none), tag (collectives: the OpClass), bytes, req_kind, request, and for
// collectives icoll_seq.
void fill_request_record(Call& c, int rc, const RequestInfo& info) noexcept {
  auto& ev = c.ev();
  auto a = mpi_args_mut(ev);
  a.comm() = info.comm;
  a.peer() = info.peer;
  a.tag() = info.tag;
  a.bytes() = info.bytes;
  a.req_kind() = info.kind;
  a.request() = info.id;
  if (info.kind == kReqColl) a.icoll_seq() = info.seq;
  if (info.neighbor) ev.flags |= flag::neighbor;
  fill_remote(ev, info);
  ev.ret = rc;
}

RequestInfo collective_info(MPI_Comm comm, int root, int64_t bytes, OpClass op) noexcept {
  RequestInfo info;
  info.comm = state().comm_id(comm);
  bool rooted = is_one_to_all(op) || is_all_to_one(op);
  bool inter = state().is_inter(info.comm);
  info.root = rooted && root >= 0 && !inter ? root : -1;
  info.peer = info.root;
  if (rooted && inter && comm != MPI_COMM_NULL) {  // pruned as all-to-all; replayed as the blocking form
    int32_t begin = 0;
    info.peer = inter_root(comm, info.comm, root, &begin, &info.remote);
    info.remote_first = begin == 0;
  }
  info.op = int64_t(op);
  info.tag = info.op;
  info.bytes = bytes;
  info.kind = kReqColl;
  return info;
}

bool gate_start(Call& c, const RequestInfo& info) noexcept {
  return gate_send(c, info.comm, raw_peer(info.peer), raw_tag(info.tag), info.bytes, false);
}

void record_start(Call& c, int rc, MPI_Request r, const RequestInfo& info, bool logged, bool own,
                  std::unique_ptr<piggyback::HeldCollective> decision) noexcept {
  RequestInfo active = info;
  active.logged = logged;
  if (active.kind == kReqColl) active.seq = int64_t(state().next_collective(active.comm));
  if (rc == MPI_SUCCESS && active.kind != 0) {
    try {
      active.id = state().add_request(r, active);
    } catch (...) {
      active.id = -1;
    }
    if (active.kind == kReqRecv && !active.partitioned && pruning(active.comm))
      piggyback::pruner().receive_posted(active.comm, r, raw_peer(active.peer), raw_tag(active.tag));
  }
  if (own) {
    fill_request_record(c, rc, active);
    if (!logged) prune(c);
    if (decision && !hold_collective_decision(std::move(decision), rc, r, c.ev())) c.drop();
    return;
  }
  // Starts before the last one: records of their own, at the call's start.
  Call& self = c;
  RawEvent saved = self.ev();
  fill_request_record(self, rc, active);
  RawEvent ev = self.ev();
  self.ev() = saved;
  ev.end = ev.start;
  if (decision && !hold_collective_decision(std::move(decision), rc, r, ev)) return;  // held, decided later
  if (logged)
    record_event(ev);
  else
    count_pruned(ev.kind, 0);
}

void probe_matched_message(Call& c, MPI_Comm comm, MPI_Message m, const MPI_Status& st) noexcept {
  if (m == MPI_MESSAGE_NO_PROC || m == MPI_MESSAGE_NULL) return;
  RequestInfo info;
  info.comm = state().comm_id(comm);
  info.peer = state().peer_of(info.comm, st.MPI_SOURCE);
  info.tag = norm_tag(st.MPI_TAG);
  info.kind = kReqRecv;
  info.matched = true;
  // The message left MPI's matching here: its auxiliary message is taken now,
  // and the receive that follows logs as the probe decides.
  piggyback::Received r = gate_receive(c, info.comm, MPI_REQUEST_NULL, st);
  info.logged = r.log;
  if (r.on_behalf) record_on_behalf(c, info.comm, st, r.aux);
  try {
    state().add_message(m, info);
  } catch (...) {
  }
}

}  // namespace mpior::preload::mpi
