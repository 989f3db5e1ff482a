#include "replayer/mpi_mode.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "replayer/mpi_ops.hpp"
#include "replayer/mpi_yield.hpp"
#include "replayer/replay_report.hpp"
#include "trace/arg_views.hpp"
#include "trace/inter_request.hpp"
#include "trace/tool_error.hpp"

namespace mpior::replay {

using trace::Event;
using trace::OpClass;

int32_t RankBlocks::first(int32_t proc) const {
  int32_t per = ranks / procs, extra = ranks % procs;
  return proc * per + std::min(proc, extra);
}

int32_t RankBlocks::owner(int32_t rank) const {
  int32_t per = ranks / procs, extra = ranks % procs;
  int32_t wide = (per + 1) * extra;  // ranks held by the processes with one more
  return rank < wide ? rank / (per + 1) : extra + (rank - wide) / std::max(1, per);
}

std::unique_ptr<MpiOps> MpiBackend::ops(int32_t rank, ErrorLog& errors, IoReplay& io, const Target& target,
                                        const std::string& who, Channels& local) {
  return std::make_unique<MpiThreadOps>(*this, rank, errors, io, target, who, local);
}

void MpiBackend::in_turn(const std::function<void()>& setup) {
  try {
    if (me_ == 0) setup();
    MPI_Barrier(MPI_COMM_WORLD);
    if (me_ != 0) setup();
  } catch (const std::exception& e) {
    fatal(e.what());
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

void MpiBackend::fatal(const std::string& why) {
  std::fprintf(stderr, "mpior-replay: process %d: %s\n", me_, why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // not reached: MPI_Abort does not return
}

const char* MpiBackend::zeros(int64_t n) {
  std::lock_guard lock(zeros_mu_);
  if (n > zeros_size_ || zeros_.empty()) {
    int64_t size = std::max<int64_t>({n, 2 * zeros_size_, 4096});
    zeros_.push_back(std::unique_ptr<char[]>(new char[size_t(size)]()));  // older ones stay: sends in flight
    zeros_size_ = size;
  }
  return zeros_.back().get();
}

MpiThreadOps::MpiThreadOps(MpiBackend& b, int32_t rank, ErrorLog& errors, IoReplay& io, const Target& target,
                           std::string who, Channels& local)
    : b_(b),
      channels_(local),
      rank_info_(b.plan().ranks[size_t(rank)]),
      rank_(rank),
      errors_(errors),
      io_(io),
      target_(target),
      who_(std::move(who)) {
  slot_.who = &who_;
  b_.board().add(&slot_);
}

MpiThreadOps::~MpiThreadOps() {
  b_.board().remove(&slot_);
  for (auto& [id, f] : files_)
    if (f.fh != MPI_FILE_NULL) MPI_File_close(&f.fh);
}

void MpiThreadOps::check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int n = 0;
  MPI_Error_string(rc, text, &n);
  throw ToolError(fmt::format("{}: {} failed: {}", who_, what, std::string(text, size_t(n))));
}

void MpiThreadOps::finish() {
  BlockedIn blocked(b_.board(), slot_, trace::Kind::MPI_Waitall, 0);
  settle_before_agreeing();  // the engine settled it, unless the replay stopped
  for (auto& [id, p] : sends_) pending_.add(p.req, std::move(p.buf), 0);
  sends_.clear();
  check(pending_.wait_all(), "MPI_Testall");
}

char* MpiThreadOps::recv_buffer(int64_t n) {
  if (int64_t(rbuf_.size()) < n) rbuf_.resize(size_t(n));
  return rbuf_.data();
}

bool MpiThreadOps::comm_of(const Event& ev, int64_t local, Comm* out) {
  Comm c;
  if (local >= 0 && size_t(local) < rank_info_.comms.size()) c.id = rank_info_.comms[size_t(local)];
  if (c.id < 0 || size_t(c.id) >= b_.comm_count()) {
    errors_.add(who_ + ": " + std::string(trace::name(ev.kind)) + " on communicator #" + std::to_string(local) +
                " that the plan does not resolve; not replayed");
    return false;
  }
  const std::vector<int32_t>& m = b_.plan().comms[size_t(c.id)].members;
  auto it = std::find(m.begin(), m.end(), rank_);
  if (it == m.end()) {
    errors_.add(who_ + ": " + std::string(trace::name(ev.kind)) + " on global communicator " + std::to_string(c.id) +
                " that does not list rank " + std::to_string(rank_) + "; not replayed");
    return false;
  }
  c.me = int32_t(it - m.begin());
  if (!b_.ready(c.id)) {
    errors_.add(who_ + ": " + std::string(trace::name(ev.kind)) + " on global communicator " + std::to_string(c.id) +
                " before its creating record or after its MPI_Comm_free; not replayed");
    return false;
  }
  *out = c;
  return true;
}

int32_t MpiThreadOps::global_of(int64_t local) const {
  return local >= 0 && size_t(local) < rank_info_.comms.size() ? rank_info_.comms[size_t(local)] : -1;
}

// A communicator made by this record (none: MPI_COMM_NULL, or freed unused).
bool MpiThreadOps::made(const Event& ev) {
  int32_t g = global_of(mpi_args(ev).newcomm());
  if (g < 0 || size_t(g) >= b_.comm_count()) return true;
  bool idup = ev.kind == trace::Kind::MPI_Comm_idup || ev.kind == trace::Kind::MPI_Comm_idup_with_info;
  b_.make(g, idup ? global_of(mpi_args(ev).comm()) : -1);
  return true;
}

bool MpiThreadOps::receive_posted(const Event& ev) {
  if (int32_t g = global_of(mpi_args(ev).comm()); g >= 0 && size_t(g) < b_.comm_count()) b_.receive_opened(g);
  return true;
}

int32_t MpiThreadOps::member_plan_rank(int32_t global, int32_t comm_rank) const {
  const std::vector<int32_t>& m = b_.plan().comms[size_t(global)].members;
  return comm_rank >= 0 && size_t(comm_rank) < m.size() ? m[size_t(comm_rank)] : -1;
}

// The plan's tag (the replay's own messages take the first kOwnTags),
// widened with both ends' places in their blocks when a process holds
// several ranks (the receiving thread takes only its own).
int MpiThreadOps::tag(int64_t plan_tag, int32_t src_plan, int32_t dst_plan) const {
  int64_t w = b_.blocks().widest(), first = plan_tag < 0 ? -plan_tag - 1 : plan_tag + kOwnTags;
  int64_t t = (first * w + b_.blocks().local(src_plan)) * w + b_.blocks().local(dst_plan);
  if (plan_tag < -kOwnTags || t > b_.tag_ub())
    throw ToolError(fmt::format("{}: tag {} does not fit MPI's tag bound {} with {} ranks per process", who_, plan_tag,
                                b_.tag_ub(), w));
  return int(t);
}

void MpiThreadOps::send(const Comm& c, MPI_Comm on, int32_t dst_comm_rank, int64_t app_tag, int64_t bytes,
                        int64_t req_id) {
  int32_t dst = member_plan_rank(c.id, dst_comm_rank);
  if (dst < 0) throw ToolError(fmt::format("{}: send to rank {} outside its communicator", who_, dst_comm_rank));
  if (b_.mine(dst)) return channels_.post({c.id, c.me, dst_comm_rank, app_tag});
  int32_t to = b_.comm(c.id).proc_rank(b_.blocks().owner(dst));
  MPI_Request req;
  bytes = std::max(bytes, kStampBytes);  // shorter ones padded: a few bytes more cost MPI nothing measurable
  SendBuffer buf = pending_.buffer(bytes);
  MessageStamp st = stamp(b_.clock());
  std::memcpy(buf.data.get(), &st, sizeof st);
  check(MPI_Isend_c(buf.data.get(), MPI_Count(bytes), MPI_BYTE, to, tag(app_tag, rank_, dst), on, &req), "MPI_Isend");
  if (req_id > 0) {
    settle_send(req_id);  // an id the trace used again
    sends_[req_id] = Posted{req, std::move(buf)};
    return;
  }
  pending_.add(req, std::move(buf), mono_now_ns());
  if (pending_.due()) check(pending_.test(), "MPI_Testsome");
}

void MpiThreadOps::cancel_send(int64_t req_id) {
  auto it = sends_.find(req_id);
  if (it == sends_.end()) return;
  MPI_Request r = it->second.req;
  SendBuffer buf = std::move(it->second.buf);
  sends_.erase(it);
  check(MPI_Cancel(&r), "MPI_Cancel");
  check(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");  // at once: cancelled, or delivered when already matched
  pending_.recycle(std::move(buf));
}

int64_t MpiThreadOps::idle_until(int64_t deadline, const std::atomic<bool>& abort) {
  PollBackoff backoff;
  for (int64_t now = mono_now_ns(); pending_.worth_polling(now); now = mono_now_ns()) {
    check(pending_.test(), "MPI_Testsome");
    if (now >= deadline || abort.load(std::memory_order_relaxed)) {
      pending_.outlived_gap();
      return mono_now_ns();
    }
    backoff();
  }
  pending_.outlived_gap();
  return sleep_until(deadline, abort);
}

bool MpiThreadOps::drive_sends() {
  if (!pending_.worth_polling(mono_now_ns())) return false;
  check(pending_.test(), "MPI_Testsome");
  return true;
}

void MpiThreadOps::settle_send(int64_t req_id) {
  auto it = sends_.find(req_id);
  if (it == sends_.end()) return;
  pending_.add(it->second.req, std::move(it->second.buf), mono_now_ns());
  sends_.erase(it);
}

// Takes the next message of the channel whatever its size (MPI_Mprobe).
void MpiThreadOps::receive(const Comm& c, MPI_Comm on, int32_t src_comm_rank, int64_t app_tag) {
  int32_t src = member_plan_rank(c.id, src_comm_rank);
  if (src < 0) throw ToolError(fmt::format("{}: receive from rank {} outside its communicator", who_, src_comm_rank));
  if (b_.mine(src)) {
    // This thread's sends to other processes move on while it waits (as a
    // compute gap's idle_until drives them): the process's other threads
    // may be in gaps of their own, or waiting here too.
    if (channels_.wait({c.id, src_comm_rank, c.me, app_tag}, Who(who_), &drive_) == WaitResult::ok) return;
    throw ToolError(fmt::format("{}: stopped waiting for a message from rank {} of this process: {}", who_, src,
                                channels_.stop_reason()));
  }
  int32_t from = b_.comm(c.id).proc_rank(b_.blocks().owner(src));
  Arrival entry = arrive(b_.clock());
  MPI_Message msg;
  MPI_Status st;
  check(mprobe_yielding(from, tag(app_tag, src, rank_), on, &msg, &st), "MPI_Improbe");
  MPI_Count n = 0;
  MPI_Get_count_c(&st, MPI_BYTE, &n);
  char* buf = recv_buffer(n);
  check(MPI_Mrecv_c(buf, n, MPI_BYTE, &msg, MPI_STATUS_IGNORE), "MPI_Mrecv");
  MessageStamp s;
  if (n < kStampBytes) throw ToolError(fmt::format("{}: a message of {} bytes, without its stamp", who_, n));
  std::memcpy(&s, buf, sizeof s);
  sender_wait_ns_ += received(entry, s);
}

bool MpiThreadOps::receive_event(const Event& ev, const Comm& c, int64_t given_src, int64_t given_tag) {
  const trace::MpiArgs a = mpi_args(ev);
  int64_t src = a.src() >= 0 ? a.src() : given_src;
  int64_t t = a.stag() >= 0 ? a.stag() : given_tag;
  if (given_src == trace::kProcNull || src == trace::kProcNull) return true;
  if (src < 0 || t < 0) {
    errors_.add(who_ + ": " + std::string(trace::name(ev.kind)) +
                ": the trace does not say which message it received; not replayed");
    return true;
  }
  receive(c, b_.comm(c.id).msg, int32_t(src), t);
  return true;
}

void MpiThreadOps::collective(OpClass op, int64_t bytes_in, int64_t root_in, const Comm& c, bool same_bytes) {
  MpiComm& mc = b_.comm(c.id);
  // Of this process's ranks alone: they meet as the threads' do, no data to move.
  if (b_.within(c.id)) return agreed_barrier(c, false);
  if (op == OpClass::barrier) return barrier_then_agree(c);
  if (same_bytes) agreed_barrier(c, true);
  mc.meet->run(
      [&] {
        int64_t bytes = std::max<int64_t>(0, bytes_in);
        if (!same_bytes) {
          int64_t mine = bytes;
          check(MPI_Allreduce(&mine, &bytes, 1, MPI_INT64_T, MPI_MAX, mc.msg), "MPI_Allreduce");
        }
        char* buf = recv_buffer(bytes);
        if (op == OpClass::allcoll) {
          check(MPI_Allreduce_c(MPI_IN_PLACE, buf, MPI_Count(bytes), MPI_BYTE, MPI_BOR, mc.msg), "MPI_Allreduce");
          return;
        }
        int32_t root = member_plan_rank(c.id, int32_t(root_in));
        if (root < 0) throw ToolError(fmt::format("{}: root {} is not in the communicator", who_, root_in));
        int from = mc.proc_rank(b_.blocks().owner(root));
        check(MPI_Bcast_c(buf, MPI_Count(bytes), MPI_BYTE, from, mc.msg), "MPI_Bcast");
      },
      &drive_);
}

// Reduce and Gather as messages to the root: with pruning only the members
// that had I/O to pass on kept their call, and the root lists them.
void MpiThreadOps::rooted_up(const Comm& c, int64_t root, int64_t bytes, bool partial) {
  MPI_Comm up = b_.comm(c.id).msg;
  if (c.me != root) return send(c, up, int32_t(root), kUpTag, bytes);
  if (partial) return;  // member() receives from the ones listed
  size_t size = b_.plan().comms[size_t(c.id)].members.size();
  for (size_t m = 0; m < size; ++m)
    if (int32_t(m) != root) receive(c, up, int32_t(m), kUpTag);
}

void MpiThreadOps::collective_done(const Event& ev, const Comm& c) {
  const trace::MpiArgs a = mpi_args(ev);
  auto op = OpClass(a.tag());
  int64_t root = a.peer(), bytes = a.bytes();
  bool down = trace::is_one_to_all(op), rooted = down || trace::is_all_to_one(op);
  if (int64_t remote = a.coll_remote_size(); rooted && remote > 0) {
    size_t n = b_.plan().comms[size_t(c.id)].members.size();
    return inter_rooted(c, root, trace::coll_remote_begin(ev.flags, remote, int64_t(n)), remote, down, bytes);
  }
  if (!rooted || root < 0) return collective(op == OpClass::barrier ? op : OpClass::allcoll, bytes, -1, c);
  if (down) return collective(op, bytes, root, c);
  rooted_up(c, root, bytes, false);
}

// Neighbour messages go on the `up` communicator with tag 1 (rooted_up's is
// 0, intercommunicator broadcasts' 2), so they never match another kind.

void MpiThreadOps::topology(const Event& ev) {
  Comm c;
  if (comm_of(ev, mpi_args(ev).comm(), &c)) topologies_.add(c.id, ev);
}

void MpiThreadOps::neighborhood(const Event& ev, const Comm& c) {
  const Neighbors* n = topologies_.of(c.id);
  if (!n) return collective(OpClass::allcoll, mpi_args(ev).bytes(), -1, c);
  MPI_Comm up = b_.comm(c.id).msg;
  int64_t bytes = std::max<int64_t>(0, mpi_args(ev).bytes());
  for (int32_t p : n->out) send(c, up, p, kNeighborTag, bytes);
  for (int32_t p : n->in) receive(c, up, p, kNeighborTag);
}

void MpiThreadOps::inter_rooted(const Comm& c, int64_t root, int64_t begin, int64_t remote, bool down, int64_t bytes) {
  if (root == trace::kProcNull) return;  // the root's group's other members take no part
  int64_t t = down ? kInterDownTag : kUpTag;
  MPI_Comm up = b_.comm(c.id).msg;
  bytes = std::max<int64_t>(0, bytes);
  if (c.me != root) {
    if (down)
      receive(c, up, int32_t(root), t);
    else
      send(c, up, int32_t(root), t, bytes);
    return;
  }
  for (int64_t m = begin; m < begin + remote; ++m) {
    if (down)
      send(c, up, int32_t(m), t, bytes);
    else
      receive(c, up, int32_t(m), t);
  }
}

bool MpiThreadOps::member(const Event& ev, uint64_t event_no) {
  BlockedIn blocked(b_.board(), slot_, ev.kind, event_no);
  Comm c;
  if (comm_of(ev, mpi_args(ev).comm(), &c)) receive(c, b_.comm(c.id).msg, int32_t(mpi_args(ev).member()), kUpTag);
  return true;
}

bool MpiThreadOps::complete(const Event& ev, uint64_t event_no) {
  BlockedIn blocked(b_.board(), slot_, ev.kind, event_no);
  count_completion(ev);
  bool done = complete_request(ev);
  // After the receive: its communicator may be waiting for it to be freed.
  if (int32_t g = global_of(mpi_args(ev).comm()); mpi_args(ev).req_kind() == trace::kReqRecv && g >= 0)
    b_.receive_closed(g);
  return done;
}

bool MpiThreadOps::complete_request(const Event& ev) {
  const trace::MpiArgs a = mpi_args(ev);
  if (a.req_kind() == trace::kReqSend) {
    if (ev.flags & trace::flag::cancelled)
      cancel_send(a.request());
    else
      settle_send(a.request());
  }
  if (ev.flags & trace::flag::cancelled) return true;  // a cancelled request moved nothing
  if (a.req_kind() == trace::kReqColl) {               // as the blocking form, where it completed
    Comm c;
    if (!comm_of(ev, a.comm(), &c)) return true;
    if (ev.flags & trace::flag::neighbor)
      neighborhood(ev, c);
    else
      collective_done(ev, c);
    return true;
  }
  if (a.req_kind() != trace::kReqRecv) return true;  // sends complete lazily, file requests at once
  Comm c;
  return !comm_of(ev, a.comm(), &c) || receive_event(ev, c, a.peer(), a.tag());
}

bool MpiThreadOps::peer_here(int64_t local, int64_t comm_rank) const {
  if (comm_rank == trace::kProcNull) return true;
  int32_t g = global_of(local);
  if (g < 0 || size_t(g) >= b_.comm_count()) return false;
  int32_t r = member_plan_rank(g, int32_t(comm_rank));
  return r >= 0 && b_.mine(r);
}

bool MpiThreadOps::comm_here(int64_t local) const {
  int32_t g = global_of(local);
  return g >= 0 && size_t(g) < b_.comm_count() && b_.within(g);
}

bool MpiThreadOps::local(const Event& ev) const {
  const trace::MpiArgs a = mpi_args(ev);
  int64_t comm = a.comm(), peer = a.peer();
  int64_t src = a.src() >= 0 ? a.src() : -1;
  switch (ev.op()) {
    case OpClass::send:
    case OpClass::isend:
      return peer_here(comm, peer);
    case OpClass::start:
      return a.req_kind() == trace::kReqSend && peer_here(comm, peer);
    case OpClass::recv:
      return peer_here(comm, src >= 0 ? src : peer);
    case OpClass::sendrecv:
      return peer_here(comm, peer) && peer_here(comm, src >= 0 ? src : a.peer2());
    case OpClass::finalize:
      return comm_here(0);  // MPI_COMM_WORLD
    default:
      return trace::is_meeting(ev.op()) && comm_here(comm);
  }
}

void MpiThreadOps::count_completion(const Event& ev) {
  const trace::MpiArgs a = mpi_args(ev);
  if (ev.flags & trace::flag::cancelled) return;
  int64_t comm = a.comm(), kind = a.req_kind();
  bool here = false;
  if (kind == trace::kReqSend) {
    here = peer_here(comm, a.peer());
  } else if (kind == trace::kReqRecv) {
    here = peer_here(comm, a.src() >= 0 ? a.src() : a.peer());
  } else if (kind == trace::kReqColl) {
    here = comm_here(comm);
  } else if (kind == trace::kReqGen) {
    return;  // nothing replays a generalized request
  }
  // Nonblocking file I/O and a communicator's duplication are MPI's own (here stays false).
  ++(here ? completions_.local : completions_.remote);
}

bool MpiThreadOps::file_barrier(const Event& ev, uint64_t event_no) {
  BlockedIn blocked(b_.board(), slot_, ev.kind, event_no);
  Comm c;
  if (comm_of(ev, mpiio_args(ev).fcomm(), &c)) agreed_barrier(c, false);
  return true;
}

}  // namespace mpior::replay
