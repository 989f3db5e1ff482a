#include "preload/mpi_pruning.hpp"

#include <algorithm>

#include "preload/member_wait.hpp"
#include "preload/mpi_handlers.hpp"
#include "preload/prune_gap.hpp"
#include "preload/recorder.hpp"
#include "trace/arg_setters.hpp"

namespace mpior::preload::mpi {

using namespace trace;
using piggyback::pruner;

namespace {

// Nested MPI calls (made from inside another intercepted call) never run the
// pruning logic: they are logged, and still send and take their auxiliary
// messages so both sides of every channel stay in step.
bool nested(const Call& c) { return c.ev().depth > 0; }

void record_child(Call& c, Kind kind, uint8_t flags, const std::array<int64_t, kNumArgs>& args) {
  RawEvent ev;
  ev.kind = kind;
  ev.flags = flags;
  ev.depth = uint8_t(c.ev().depth < 254 ? c.ev().depth + 1 : 255);
  ev.start = ev.end = clock::now();  // after the parent started: it stays first
  ev.callsite = c.ev().callsite;
  ev.args = args;
  record_event(ev);
}

int my_rank_in(const std::vector<int32_t>& members) {
  auto it = std::find(members.begin(), members.end(), state().world_rank());
  return it == members.end() ? -1 : int(it - members.begin());
}

}  // namespace

bool decide_alone(Call& c, int root) noexcept {
  TracerGuard guard;
  note_computation(c);
  if (root <= 0) pruner().nodes().mark(state().world_rank());  // as the exchange's end marks its members
  return nested(c);
}

bool gate_send(Call& c, int32_t comm, int dest, int tag, int64_t bytes, bool force) noexcept {
  if (!pruning(comm) || dest == MPI_PROC_NULL) return true;
  TracerGuard guard;
  note_computation(c);
  piggyback::AuxMessage aux;
  ThreadRecorder* r = t_state.recorder;
  aux.position = r ? int64_t(r->events()) : 0;
  aux.thread = r ? int32_t(r->index()) : 0;
  aux.start_ns = clock::to_ns(c.ev().start);
  aux.bytes = bytes;
  aux.kind = uint16_t(c.ev().kind);
  bool log = pruner().send(comm, dest, tag, aux, force || nested(c));
  c.restart();  // the auxiliary message is the tracer's
  return log;
}

piggyback::Received gate_receive(Call& c, int32_t comm, MPI_Request handle, const MPI_Status& st) noexcept {
  // No source: MPI_PROC_NULL's, or the empty status of an inactive request
  // (MPI_ANY_SOURCE): no message came, there is nothing to decide.
  if (!pruning(comm) || st.MPI_SOURCE < 0) return {};
  TracerGuard guard;
  note_computation(c);
  piggyback::Received r = pruner().received(comm, handle, st.MPI_SOURCE, st.MPI_TAG);
  if (nested(c)) r.log = true;
  return r;
}

void record_on_behalf(Call& c, int32_t comm, const MPI_Status& st, const piggyback::AuxMessage& aux) noexcept {
  std::array<int64_t, kNumArgs> args{};
  auto a = mpi_args_mut(args);
  a.comm() = comm;
  a.peer() = state().peer_of(comm, st.MPI_SOURCE);
  a.tag() = aux.tag;
  a.bytes() = aux.bytes;
  a.sender_thread() = aux.thread;
  a.sender_position() = aux.position;
  a.sender_start() = aux.start_ns;
  record_child(c, Kind(aux.kind), flag::on_behalf, args);
}

void begin_decision(Call& c, int32_t comm, int root, piggyback::DecisionExchange& x) noexcept {
  if (!pruning(comm)) return;
  TracerGuard guard;
  note_computation(c);
  x.posted = true;
  const std::vector<int32_t>& members = pruner().members(comm);
  x.members = members;
  if (root < 0) return pruner().all_to_all_begin(comm, x);
  x.root = root;
  x.me = my_rank_in(members);
  if (is_one_to_all(info(c.ev().kind).op)) return pruner().one_to_all_begin(comm, x);
  pruner().all_to_one_begin(comm, x);
}

namespace {
void record_members(Call& c, int32_t comm, const piggyback::RootedDecision& d) noexcept {
  mpi_args_mut(c.ev()).contributors() = int64_t(d.members_logged.size()) + 1;
  for (int32_t m : d.members_logged) {
    std::array<int64_t, kNumArgs> args{};
    auto a = mpi_args_mut(args);
    a.comm() = comm;
    a.member() = m;
    record_child(c, Kind::mpior_member, 0, args);
  }
}
}  // namespace

bool end_decision(Call& c, int32_t comm, piggyback::DecisionExchange& x) noexcept {
  if (!x.posted) return true;
  TracerGuard guard;
  if (x.root < 0) return pruner().all_to_all_end(x) || nested(c);
  if (is_one_to_all(info(c.ev().kind).op)) return pruner().one_to_all_end(x) || nested(c);
  piggyback::RootedDecision d = pruner().all_to_one_end(x);
  // A nested call (ROMIO's own, inside an MPI-IO call, where its MPI calls
  // are seen: Open MPI's) is kept on every member, as it is here.
  if (nested(c)) return true;
  if (d.log && x.me == x.root && !d.all_members) record_members(c, comm, d);
  return d.log;
}

void init_collective_decision(const RequestInfo& info, MPI_Request request) noexcept {
  if (!pruning(info.comm)) return;
  TracerGuard guard;
  try {
    pruner().persistent_init(info.comm, handle_key(request), int(info.root),
                             info.root >= 0 && is_one_to_all(OpClass(info.op)));
  } catch (...) {
  }
}

std::unique_ptr<piggyback::HeldCollective> post_collective_decision(Call& c, const RequestInfo& info,
                                                                    MPI_Request persistent) noexcept {
  if (!pruning(info.comm)) return nullptr;
  TracerGuard guard;
  try {
    auto h = std::make_unique<piggyback::HeldCollective>();
    if (persistent != MPI_REQUEST_NULL && !(h->persistent = pruner().persistent(handle_key(persistent))))
      return nullptr;
    note_computation(c);
    h->members = pruner().members(info.comm);
    h->forced = nested(c);
    h->x.root = int(info.root);
    h->x.me = my_rank_in(h->members);
    pruner().nonblocking_begin(info.comm, *h, info.root >= 0 && is_one_to_all(OpClass(info.op)));
    return h;
  } catch (...) {
    return nullptr;
  }
}

bool hold_collective_decision(std::unique_ptr<piggyback::HeldCollective> h, int rc, MPI_Request request,
                              const RawEvent& post) noexcept {
  if (!h) return true;
  TracerGuard guard;
  bool now = h->local || h->forced || rc != MPI_SUCCESS;
  if (!now) {
    h->deferred = true;
    h->post = post;
  }
  try {
    if (rc == MPI_SUCCESS)
      pruner().hold(handle_key(request), std::move(h));
    else
      pruner().hold(0, std::move(h));  // no request: finish() lets it go
  } catch (...) {
    return true;
  }
  return now;
}

int settle_collective(Call& c, MPI_Request request) noexcept {
  std::unique_ptr<piggyback::HeldCollective> h = pruner().take_held(handle_key(request));
  if (!h) return -1;
  TracerGuard guard;
  bool log = pruner().nonblocking_end(*h) || h->forced;
  if (!h->deferred) return 1;
  if (!log) {
    count_pruned(h->post.kind, h->post.end - h->post.start);
    return 0;
  }
  RawEvent ev = h->post;  // recorded where the decision is known, first under c
  ev.depth = uint8_t(c.ev().depth < 254 ? c.ev().depth + 1 : 255);
  ev.start = ev.end = c.ev().end;
  record_event(ev);
  return 1;
}

bool inline_decision(int32_t comm, int64_t bytes) noexcept {
  return bytes >= 0 && size_t(bytes) <= piggyback::kInlineMax && pruning(comm) && !state().is_inter(comm) &&
         pruner().members(comm).size() > 1;
}

// All to all: the decision is everyone's, and everyone synchronised.
int inline_allreduce(Call& c, int32_t comm, const piggyback::FlagCodec& codec, const void* sendbuf, void* recvbuf,
                     int count, MPI_Datatype t, MPI_Op op, MPI_Comm mc, bool* log) noexcept {
  note_computation(c);
  const std::vector<int32_t>& members = pruner().members(comm);
  bool mine = pruner().nodes().pending_any(members, state().world_rank());
  int rc;
  c.restart();
  {
    TracerGuard guard;
    rc = piggyback::allreduce_with_flag(codec, sendbuf, recvbuf, count, t, op, mc, mine, log);
  }
  c.stop();
  pruner().nodes().mark_all(members);
  *log = *log || nested(c);
  return rc;
}

// One to all: the root's decision travels; a member synchronised with the root.
int inline_bcast(Call& c, int32_t comm, void* buffer, int count, MPI_Datatype t, int64_t bytes, int root, MPI_Comm mc,
                 bool* log) noexcept {
  note_computation(c);
  const std::vector<int32_t>& members = pruner().members(comm);
  bool am_root = size_t(root) < members.size() && members[size_t(root)] == state().world_rank();
  bool mine = am_root && pruner().nodes().pending_any(members, state().world_rank());
  int rc;
  c.restart();
  {
    TracerGuard guard;
    rc = piggyback::bcast_with_flag(buffer, count, t, bytes, root, am_root, mc, mine, log);
  }
  c.stop();
  if (am_root)
    pruner().nodes().mark_all(members);
  else if (size_t(root) < members.size())
    pruner().nodes().mark(members[size_t(root)]);
  *log = *log || nested(c);
  return rc;
}

void comm_made(int32_t parent, uint64_t parent_seq, int32_t comm, MPI_Comm app) noexcept {
  if (!pruner().active()) return;
  TracerGuard guard;
  pruner().synced_all(state().members(parent));
  if (comm >= 0) pruner().comm_created(comm, app, parent, parent_seq, state().members(comm));
}

void comm_made_local(int32_t comm, MPI_Comm app) noexcept {
  if (!pruner().active()) return;
  TracerGuard guard;
  pruner().synced_all(state().members(comm));
  pruner().comm_created(comm, app, -1, 0, state().members(comm));
}

void comm_unmade(int32_t comm) noexcept {
  if (!pruner().active()) return;
  TracerGuard guard;
  pruner().synced_all(state().members(comm));
  pruner().comm_freed(comm);
}

void prune_rooted(Call& c, const piggyback::DecisionExchange& x) noexcept {
  if (x.posted && x.root >= 0 && x.me != x.root && !is_one_to_all(info(c.ev().kind).op)) leave_out_member_wait(c);
  prune(c);
}

// A pruned call's duration (counted as traced) passes into the computation
// before the next record, less its clock readings' own time (Call::stop
// left that out: comm_split's 240,000 one-member collectives a rank).
void prune(Call& c) noexcept {
  trace::RawEvent& ev = c.ev();
  count_pruned(ev.kind, ev.end - ev.start);
  c.drop();
}

}  // namespace mpior::preload::mpi
