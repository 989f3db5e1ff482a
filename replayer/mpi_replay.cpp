#include "replayer/mpi_replay.hpp"

#include <algorithm>
#include <climits>

#include "trace/arg_views.hpp"
#include "trace/inter_request.hpp"

namespace mpior::replay {
namespace {

using trace::Event;
using trace::OpClass;

}  // namespace

MpiWorld::MpiWorld(const trace::Plan& plan, Progress& progress, uint32_t threads)
    : plan_(plan), progress_(progress), channels_(progress, threads) {
  for (const trace::PlanComm& c : plan.comms) {
    std::vector<std::pair<int32_t, int32_t>> index;
    for (size_t i = 0; i < c.members.size(); ++i) index.emplace_back(c.members[i], int32_t(i));
    std::sort(index.begin(), index.end());
    ranks_of_.push_back(std::move(index));
    uint32_t present = 0;
    for (int32_t r : c.members) present += !std::binary_search(plan.missing.begin(), plan.missing.end(), r);
    present_.push_back(present);
    barriers_.push_back(std::make_unique<CommBarrier>(present, poll_ns(threads)));
  }
  for (const trace::Stream& s : plan.streams) by_instance_ = by_instance_ || s.thread > 0;
  progress_.set_waker([this] {
    channels_.wake_all();
    for (auto& b : barriers_) b->wake_all();
    std::lock_guard lock(instances_mu_);
    for (auto& [key, i] : instances_) i.barrier->wake_all();
  });
}

MpiWorld::~MpiWorld() { progress_.set_waker({}); }

std::shared_ptr<CommBarrier> MpiWorld::instance(int32_t comm, int64_t seq) {
  uint32_t members = present_[size_t(comm)];
  std::lock_guard lock(instances_mu_);
  auto [it, made] = instances_.try_emplace({comm, seq});
  if (made) it->second.barrier = std::make_shared<CommBarrier>(members);
  std::shared_ptr<CommBarrier> b = it->second.barrier;
  if (++it->second.arrived >= members) instances_.erase(it);
  return b;
}

bool MpiWorld::absent(int32_t comm, int32_t member) const {
  if (plan_.missing.empty() || comm < 0 || size_t(comm) >= plan_.comms.size()) return false;
  const std::vector<int32_t>& m = plan_.comms[size_t(comm)].members;
  return member >= 0 && size_t(member) < m.size() &&
         std::binary_search(plan_.missing.begin(), plan_.missing.end(), m[size_t(member)]);
}

int32_t MpiWorld::comm_rank(int32_t comm, int32_t world_rank) const {
  if (comm < 0 || size_t(comm) >= ranks_of_.size()) return -1;
  const auto& index = ranks_of_[size_t(comm)];
  auto it = std::lower_bound(index.begin(), index.end(), std::make_pair(world_rank, INT32_MIN));
  return it != index.end() && it->first == world_rank ? it->second : -1;
}

MpiReplay::MpiReplay(MpiWorld& world, const trace::Plan& plan, int32_t rank, ErrorLog& errors, std::string who)
    : world_(world), rank_info_(plan.ranks[size_t(rank)]), rank_(rank), errors_(errors), who_(std::move(who)) {}

std::string MpiReplay::where(const Event& ev, uint64_t event_no) const {
  return who_ + " at event #" + std::to_string(event_no) + " (" + std::string(trace::name(ev.kind)) + ")";
}

std::optional<MpiReplay::Comm> MpiReplay::comm_of(const Event& ev) { return comm_of(ev, mpi_args(ev).comm()); }

std::optional<MpiReplay::Comm> MpiReplay::comm_of(const Event& ev, int64_t local) {
  Comm c;
  if (local >= 0 && size_t(local) < rank_info_.comms.size()) c.id = rank_info_.comms[size_t(local)];
  if (c.id < 0 || size_t(c.id) >= world_.comm_count()) {
    errors_.add(who_ + ": " + std::string(trace::name(ev.kind)) + " on communicator #" + std::to_string(local) +
                " that the plan does not resolve; not synchronised");
    return std::nullopt;
  }
  c.me = world_.comm_rank(c.id, rank_);
  if (c.me < 0) {
    errors_.add(who_ + ": " + std::string(trace::name(ev.kind)) + " on global communicator " + std::to_string(c.id) +
                " that does not list rank " + std::to_string(rank_) + "; not synchronised");
    return std::nullopt;
  }
  return c;
}

// Each MPI kind's synchronisation by its op class (kind_table.hpp); a new op
// class fails the build here until it is given one (or `bookkeeping`).
constexpr KindTable<MpiReplay::Call> MpiReplay::calls() {
  using F = trace::Family;
  using Op = OpClass;
  return kind_table<Call>({
      // Nothing to meet: requests made, freed, cancelled, collectives posted
      // (they meet at their completion), probes, communicators made over
      // groups; Wait/Test meet in their completion records.
      {F::mpi, Op::init, &MpiReplay::bookkeeping},
      {F::mpi, Op::wait, &MpiReplay::bookkeeping},
      {F::mpi, Op::test, &MpiReplay::bookkeeping},
      {F::mpi, Op::irecv, &MpiReplay::bookkeeping},
      {F::mpi, Op::pinit, &MpiReplay::bookkeeping},
      {F::mpi, Op::icoll, &MpiReplay::bookkeeping},
      {F::mpi, Op::probe, &MpiReplay::bookkeeping},
      {F::mpi, Op::cancel, &MpiReplay::bookkeeping},
      {F::mpi, Op::request, &MpiReplay::bookkeeping},
      {F::mpi, Op::comm_local, &MpiReplay::bookkeeping},
      {F::mpi, Op::finalize, &MpiReplay::finalize},
      {F::mpi, Op::send, &MpiReplay::on_comm<&MpiReplay::send>},
      {F::mpi, Op::isend, &MpiReplay::on_comm<&MpiReplay::send>},
      {F::mpi, Op::recv, &MpiReplay::on_comm<&MpiReplay::recv>},
      {F::mpi, Op::sendrecv, &MpiReplay::on_comm<&MpiReplay::sendrecv>},
      {F::mpi, Op::start, &MpiReplay::on_comm<&MpiReplay::start>},
      {F::mpi, Op::barrier, &MpiReplay::on_comm<&MpiReplay::meet>},
      {F::mpi, Op::allcoll, &MpiReplay::on_comm<&MpiReplay::meet>},
      {F::mpi, Op::bcast, &MpiReplay::on_comm<&MpiReplay::rooted>},
      {F::mpi, Op::scatter, &MpiReplay::on_comm<&MpiReplay::rooted>},
      {F::mpi, Op::reduce, &MpiReplay::on_comm<&MpiReplay::rooted>},
      {F::mpi, Op::gather, &MpiReplay::on_comm<&MpiReplay::rooted>},
      // Communicator construction and free are local bookkeeping (the plan
      // knows every communicator): the program's own calls that synchronise
      // are what the replay waits for.
      {F::mpi, Op::comm_create, &MpiReplay::on_comm<&MpiReplay::made>},
      {F::mpi, Op::comm_free, &MpiReplay::on_comm<&MpiReplay::made>},
      {F::posix, std::nullopt, &MpiReplay::bookkeeping},  // the engine hands only MPI calls here
      {F::stdio, std::nullopt, &MpiReplay::bookkeeping},
      {F::aio, std::nullopt, &MpiReplay::bookkeeping},
      {F::mmap, std::nullopt, &MpiReplay::bookkeeping},
      {F::mpiio, std::nullopt, &MpiReplay::bookkeeping},
      {F::internal, std::nullopt, &MpiReplay::bookkeeping},
  });
}

bool MpiReplay::replay(const Event& ev, uint64_t event_no) {
  static constexpr auto kCalls = calls();
  static_assert(every_kind_handled(kCalls), "an MPI kind of trace/api/*.list has no replay: register one");
  return (this->*kCalls[size_t(ev.kind)])(ev, event_no);
}

bool MpiReplay::finalize(const Event& ev, uint64_t event_no) {  // every rank leaves MPI together
  auto c = comm_of(ev, 0);
  return !c || barrier(ev, *c, event_no);
}

bool MpiReplay::send(const Event& ev, const Comm& c, uint64_t) {
  const trace::MpiArgs a = mpi_args(ev);
  if (a.peer() != trace::kProcNull) world_.channels().post({c.id, c.me, int32_t(a.peer()), a.tag()});
  return true;
}

bool MpiReplay::recv(const Event& ev, const Comm& c, uint64_t event_no) {
  return receive(ev, c, mpi_args(ev).peer(), mpi_args(ev).tag(), event_no);
}

bool MpiReplay::sendrecv(const Event& ev, const Comm& c, uint64_t event_no) {
  send(ev, c, event_no);
  return receive(ev, c, mpi_args(ev).peer2(), mpi_args(ev).tag2(), event_no);
}

// A persistent send starts; receives and collectives wait at their completion.
bool MpiReplay::start(const Event& ev, const Comm& c, uint64_t event_no) {
  return mpi_args(ev).req_kind() != trace::kReqSend || send(ev, c, event_no);
}

bool MpiReplay::meet(const Event& ev, const Comm& c, uint64_t event_no) {
  if (ev.flags & trace::flag::neighbor) return neighborhood(ev, c, event_no);
  return barrier(ev, c, event_no, mpi_args(ev).coll_seq());
}

// Cancelled requests moved nothing; a nonblocking or persistent collective
// meets the other members where it completed.
bool MpiReplay::complete(const Event& ev, uint64_t event_no) {
  const trace::MpiArgs a = mpi_args(ev);
  if (ev.flags & trace::flag::cancelled) return true;
  int64_t kind = a.req_kind();
  if (kind != trace::kReqRecv && kind != trace::kReqColl) return true;  // sends posted when they started
  auto c = comm_of(ev);
  if (!c) return true;
  if (kind == trace::kReqRecv) return receive(ev, *c, a.peer(), a.tag(), event_no);
  if (ev.flags & trace::flag::neighbor) return neighborhood(ev, *c, event_no);
  auto op = OpClass(a.tag());
  int64_t root = a.peer();
  if (int64_t remote = a.coll_remote_size(); remote > 0) {  // rooted, on an intercommunicator
    int64_t begin = trace::coll_remote_begin(ev.flags, remote, int64_t(world_.members(c->id).size()));
    return inter_rooted(ev, *c, root, begin, remote, trace::is_one_to_all(op), event_no);
  }
  if (root < 0 || !(trace::is_one_to_all(op) || trace::is_all_to_one(op)))
    return barrier(ev, *c, event_no, a.icoll_seq());
  return rooted_at(ev, *c, int32_t(root), trace::is_one_to_all(op), false, event_no);
}

// Waits for the message the traced receive got: from the actual source with
// the actual tag (the status), which resolves MPI_ANY_SOURCE and MPI_ANY_TAG.
bool MpiReplay::receive(const Event& ev, const Comm& c, int64_t given_src, int64_t given_tag, uint64_t event_no) {
  const trace::MpiArgs a = mpi_args(ev);
  int64_t src = a.src() >= 0 ? a.src() : given_src;
  int64_t tag = a.stag() >= 0 ? a.stag() : given_tag;
  if (given_src == trace::kProcNull || src == trace::kProcNull) return true;
  if (src < 0 || tag < 0) {
    errors_.add(where(ev, event_no) + ": the trace does not say which message it received; not synchronised");
    return true;
  }
  auto who = [&] { return where(ev, event_no); };
  return world_.wait({c.id, int32_t(src), c.me, tag}, who) == WaitResult::ok;
}

bool MpiReplay::barrier(const Event& ev, const Comm& c, uint64_t event_no, int64_t seq) {
  auto who = [&] { return where(ev, event_no) + " on global communicator " + std::to_string(c.id); };
  if (seq >= 0 && world_.by_instance())
    return world_.instance(c.id, seq)->wait(world_.progress(), who) == WaitResult::ok;
  return world_.barrier(c.id).wait(world_.progress(), who) == WaitResult::ok;
}

bool MpiReplay::file_barrier(const Event& ev, uint64_t event_no) {
  auto c = comm_of(ev, mpiio_args(ev).fcomm());
  return !c || barrier(ev, *c, event_no);
}

bool MpiReplay::member(const Event& ev, uint64_t event_no) {
  auto c = comm_of(ev);
  if (!c) return true;
  int32_t m = int32_t(mpi_args(ev).member());
  auto who = [&] { return where(ev, event_no); };
  return world_.wait({c->id, m, c->me, kTagUp}, who) == WaitResult::ok;
}

// A rooted collective on an intercommunicator is recorded with root -1: all
// of both groups meet.
bool MpiReplay::rooted(const Event& ev, const Comm& c, uint64_t event_no) {
  const trace::MpiArgs a = mpi_args(ev);
  if (a.remote_size() > 0)
    return inter_rooted(ev, c, a.root(), a.remote_begin(), a.remote_size(), trace::is_one_to_all(ev.op()), event_no);
  int32_t root = int32_t(a.root());
  if (root < 0) return barrier(ev, c, event_no);
  bool partial = !trace::is_one_to_all(ev.op()) && a.contributors() > 0;
  return rooted_at(ev, c, root, trace::is_one_to_all(ev.op()), partial, event_no);
}

bool MpiReplay::rooted_at(const Event& ev, const Comm& c, int32_t root, bool down, bool partial, uint64_t event_no) {
  int32_t size = int32_t(world_.members(c.id).size());
  if (root >= size) {
    errors_.add(where(ev, event_no) + ": root " + std::to_string(root) + " is not in the communicator");
    return true;
  }
  Channels& ch = world_.channels();
  auto who = [&] { return where(ev, event_no); };
  if (c.me != root) {
    if (!down) {
      ch.post({c.id, c.me, root, kTagUp});
      return true;
    }
    return world_.wait({c.id, root, c.me, kTagDown}, who) == WaitResult::ok;
  }
  // Only some members' calls were kept (the others had no I/O to pass on):
  // the mpior_member records that follow name them, and member() waits.
  if (partial) return true;
  for (int32_t m = 0; m < size; ++m) {
    if (m == root) continue;
    if (down)
      ch.post({c.id, root, m, kTagDown});
    else if (world_.wait({c.id, m, root, kTagUp}, who) != WaitResult::ok)
      return false;
  }
  return true;
}

void MpiReplay::topology(const Event& ev) {
  auto c = comm_of(ev);
  if (c) topologies_.add(c->id, ev);
}

bool MpiReplay::neighborhood(const Event& ev, const Comm& c, uint64_t event_no) {
  const Neighbors* n = topologies_.of(c.id);
  if (!n) return barrier(ev, c, event_no);
  Channels& ch = world_.channels();
  for (int32_t p : n->out) ch.post({c.id, c.me, p, kTagNeighbor});
  auto who = [&] { return where(ev, event_no); };
  for (int32_t p : n->in)
    if (world_.wait({c.id, p, c.me, kTagNeighbor}, who) != WaitResult::ok) return false;
  return true;
}

// kProcNull: a member of the root's group other than the root, which takes
// no part. The root exchanges with every member of its remote group.
bool MpiReplay::inter_rooted(const Event& ev, const Comm& c, int64_t root, int64_t begin, int64_t remote, bool down,
                             uint64_t event_no) {
  if (root == trace::kProcNull) return true;
  int32_t r = int32_t(root);
  Channels& ch = world_.channels();
  auto who = [&] { return where(ev, event_no); };
  if (c.me != r) {
    if (!down) {
      ch.post({c.id, c.me, r, kTagUp});
      return true;
    }
    return world_.wait({c.id, r, c.me, kTagDown}, who) == WaitResult::ok;
  }
  for (int32_t m = int32_t(begin); m < int32_t(begin + remote); ++m) {
    if (down)
      ch.post({c.id, r, m, kTagDown});
    else if (world_.wait({c.id, m, r, kTagUp}, who) != WaitResult::ok)
      return false;
  }
  return true;
}

}  // namespace mpior::replay
