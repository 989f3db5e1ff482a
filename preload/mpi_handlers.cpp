#include "preload/mpi_handlers.hpp"

#include "trace/arg_setters.hpp"

namespace mpior::preload::mpi {

using namespace trace;

namespace {
// Sizes of the predefined datatypes a thread used, by handle: a predefined
// type is never freed, so its handle never names another type (a derived
// one's may, after MPI_Type_free, and is asked each time). A message's size
// otherwise costs a call into MPI on every send (issue 11's latency).
struct NamedTypeSize {
  uint64_t key;
  int64_t size;
};
constexpr size_t kTypeSizeSlots = 8;
constinit thread_local NamedTypeSize t_type_sizes[kTypeSizeSlots] __attribute__((tls_model("initial-exec"))) = {};

size_t type_slot(uint64_t key) { return size_t((key * 0x9E3779B97F4A7C15ull) >> 61); }

bool predefined(MPI_Datatype t) {
  int ints = 0, addrs = 0, types = 0, combiner = 0;
  return pmpi::Type_get_envelope(t, &ints, &addrs, &types, &combiner) == MPI_SUCCESS && combiner == MPI_COMBINER_NAMED;
}
}  // namespace

namespace expr {
int64_t type_size(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL) return 0;
  uint64_t key = handle_key(t);
  NamedTypeSize& slot = t_type_sizes[type_slot(key)];
  if (slot.key == key && key != 0) return slot.size;
  if (!pmpi::Type_size_x) pmpi::resolve();
  MPI_Count size = 0;
  if (pmpi::Type_size_x(t, &size) != MPI_SUCCESS) return 0;
  if (predefined(t)) slot = {key, int64_t(size)};
  return size;
}

int64_t comm_size(MPI_Comm c) {
  if (!pmpi::Comm_size) pmpi::resolve();
  int n = 0;
  pmpi::Comm_size(c, &n);
  return n;
}

int64_t peer_count(MPI_Comm c) {
  if (!pmpi::Comm_size) pmpi::resolve();
  int inter = 0, n = 0;
  if (pmpi::Comm_test_inter(c, &inter) == MPI_SUCCESS && inter) {
    pmpi::Comm_remote_size(c, &n);
    return n;
  }
  return comm_size(c);
}
}  // namespace expr

MPI_Status* StatusBuffer::get(MPI_Status* app, int n) {
  if (app != MPI_STATUSES_IGNORE && app != MPI_STATUS_IGNORE) return app;
  if (n <= int(small_.size())) return small_.data();
  large_.resize(size_t(n));
  return large_.data();
}

RequestSnapshot::RequestSnapshot(const MPI_Request* requests, int n) {
  if (n < 0) n = 0;
  if (n > int(small_.size())) large_.resize(size_t(n));
  data_ = n > int(small_.size()) ? large_.data() : small_.data();
  for (int i = 0; i < n; ++i) data_[i] = requests[i];
}

void fill_p2p(Call& c, int rc, MPI_Comm comm, int peer, int tag, int64_t bytes) noexcept {
  fill_p2p_on(c, rc, state().comm_id(comm), peer, tag, bytes);
}

void fill_p2p_on(Call& c, int rc, int32_t id, int peer, int tag, int64_t bytes) noexcept {
  auto& ev = c.ev();
  auto a = mpi_args_mut(ev);
  a.comm() = id;
  a.peer() = state().peer_of(id, peer);
  a.tag() = norm_tag(tag);
  a.bytes() = bytes;
  ev.ret = rc;
}

namespace {
int64_t status_bytes(const MPI_Status& st) { return status_byte_count(st); }
}  // namespace

void fill_recv_status(Call& c, const MPI_Status& st) noexcept {
  auto& ev = c.ev();
  auto a = mpi_args_mut(ev);
  a.src() = state().peer_of(int32_t(a.comm()), st.MPI_SOURCE);
  a.stag() = norm_tag(st.MPI_TAG);
  a.bytes() = status_bytes(st);
}

int64_t add_request(MPI_Request r, MPI_Comm comm, int peer, int tag, int64_t bytes, int64_t kind,
                    bool logged) noexcept {
  try {
    int32_t id = state().comm_id(comm);
    RequestInfo info;
    info.comm = id;
    info.peer = state().peer_of(id, peer);
    info.tag = norm_tag(tag);
    info.bytes = bytes;
    info.kind = kind;
    info.logged = logged;
    return state().add_request(r, info);
  } catch (...) {
    return -1;
  }
}

void record_completion(Call& c, const RequestInfo& info, const MPI_Status* st, bool cancelled) noexcept {
  RawEvent ev;
  ev.kind = Kind::mpior_complete;
  ev.flags = uint8_t((cancelled ? flag::cancelled : 0) | (info.neighbor ? flag::neighbor : 0));
  ev.depth = uint8_t(c.ev().depth < 254 ? c.ev().depth + 1 : 255);
  ev.start = ev.end = c.ev().end;
  ev.callsite = c.ev().callsite;
  auto a = mpi_args_mut(ev);
  a.comm() = info.comm;
  a.peer() = info.peer;
  a.tag() = info.tag;
  a.bytes() = info.bytes;
  a.req_kind() = info.id < 0 ? 0 : info.kind;
  a.request() = info.id;
  a.src() = -1;
  a.stag() = -1;
  if (info.kind == kReqColl) {
    a.icoll_seq() = info.seq;
    fill_remote(ev, info);
  } else if (info.given_status && st && !cancelled) {
    a.src() = state().peer_of(info.comm, st->MPI_SOURCE);
    a.stag() = norm_tag(st->MPI_TAG);
  } else if (st && !cancelled && (info.kind == kReqRecv || info.id < 0)) {
    a.src() = state().peer_of(info.comm, st->MPI_SOURCE);
    a.stag() = norm_tag(st->MPI_TAG);
    if (info.kind == kReqRecv) a.bytes() = status_bytes(*st);
  }
  record_event(ev);
}

namespace {
bool was_cancelled(const RequestInfo& info, const MPI_Status* st) {
  if (!st || info.id < 0 || (info.kind != kReqSend && info.kind != kReqRecv)) return false;
  int flag = 0;
  return pmpi::Test_cancelled(st, &flag) == MPI_SUCCESS && flag;
}
}  // namespace

// A request the tracer never saw started is left out when it is a persistent
// one (an inactive request completes at once, with nothing done).
bool settle_completion(Call& c, MPI_Request handle, const MPI_Status* st) noexcept {
  RequestInfo info = state().take_request(handle);
  if (info.id < 0 && state().persistent(handle, nullptr)) return false;
  if (info.kind == kReqColl && settle_collective(c, handle) == 0) return false;
  // MPICH 4.0 leaves the status of a partitioned receive and of an
  // MPI_Isendrecv unset: without wildcards, the message is the one asked for.
  MPI_Status given;
  if (info.given_status && st && info.peer >= 0 && info.tag >= 0) {
    given = *st;
    given.MPI_SOURCE = int(info.peer - state().remote_offset(info.comm));
    given.MPI_TAG = int(info.tag);
    st = &given;
  }
  bool cancelled = was_cancelled(info, st);
  bool kept = info.logged;
  piggyback::Received r;
  if (cancelled) {
    if (info.kind == kReqRecv && pruning(info.comm)) piggyback::pruner().receive_dropped(info.comm, handle);
    kept = true;
  } else if (info.kind == kReqRecv && st && !info.matched) {
    r = gate_receive(c, info.comm, handle, *st);
    kept = r.log;
  }
  if (!kept) return false;
  record_completion(c, info, st, cancelled);
  if (r.on_behalf) record_on_behalf(c, info.comm, *st, r.aux);
  return true;
}

void fill_collective(Call& c, int rc, int32_t id, int64_t root, int64_t bytes) noexcept {
  auto& ev = c.ev();
  auto a = mpi_args_mut(ev);
  a.coll_seq() = int64_t(state().next_collective(id));
  a.comm() = id;
  a.bytes() = bytes;
  if (root >= 0) a.root() = root;
  ev.ret = rc;
}

}  // namespace mpior::preload::mpi
