#include "preload/mpi_state.hpp"

#include <algorithm>
#include <climits>

#include "preload/journal.hpp"
#include "preload/real_table.hpp"
#include "preload/thread_state.hpp"

namespace mpior::preload::mpi {

namespace pmpi {
#define MPIOR_PMPI_DEF(name) decltype(&::PMPI_##name) name = nullptr;
MPIOR_PMPI_HELPERS(MPIOR_PMPI_DEF)
MPIOR_PMPI_MPI4_HELPERS(MPIOR_PMPI_DEF)
#undef MPIOR_PMPI_DEF

bool resolve() noexcept {
  bool ok = true;
#define MPIOR_PMPI_RESOLVE(name)                                                    \
  if (!name) name = reinterpret_cast<decltype(name)>(real::resolve("PMPI_" #name)); \
  ok = ok && name;
  MPIOR_PMPI_HELPERS(MPIOR_PMPI_RESOLVE)
  bool required = ok;
  MPIOR_PMPI_MPI4_HELPERS(MPIOR_PMPI_RESOLVE)
#undef MPIOR_PMPI_RESOLVE
  (void)ok;
  return required;
}
}  // namespace pmpi

int64_t norm_peer(int peer) {
  if (peer == MPI_ANY_SOURCE) return trace::kAnySource;
  if (peer == MPI_PROC_NULL) return trace::kProcNull;
  return peer;
}

int64_t norm_tag(int tag) { return tag == MPI_ANY_TAG ? trace::kAnyTag : tag; }

void MpiState::init(int world_rank, int world_size) {
  std::lock_guard<std::mutex> lk(mutex_);
  world_rank_ = world_rank;
  world_size_ = world_size;
  if (!comms_.empty()) return;
  trace::CommEntry world{0, trace::CommOrigin::world, -1, 0, 0, 0, {}};
  for (int r = 0; r < world_size; ++r) world.members.push_back(r);
  comms_.push_back(world);
  comms_.push_back({1, trace::CommOrigin::self, -1, 0, 0, 0, {world_rank}});
  collectives_.clear();
  collectives_.emplace_back(0);
  collectives_.emplace_back(0);
  remote_offset_.assign(2, 0);
  comm_ids_[MPI_COMM_WORLD] = 0;
  comm_ids_[MPI_COMM_SELF] = 1;
}

std::vector<int32_t> MpiState::translate(MPI_Group g) {
  std::vector<int32_t> out;
  MPI_Group world = world_group_;
  bool own = world == MPI_GROUP_NULL;
  if (own) pmpi::Comm_group(MPI_COMM_WORLD, &world);
  int n = 0;
  pmpi::Group_size(g, &n);
  std::vector<int> local(static_cast<size_t>(n)), global(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) local[size_t(i)] = i;
  pmpi::Group_translate_ranks(g, n, local.data(), world, global.data());
  out.assign(global.begin(), global.end());
  if (own) pmpi::Group_free(&world);
  return out;
}

// An intercommunicator lists both groups, the one holding the lower world
// rank first, so both sides name it alike; *offset is where the remote group
// starts.
std::vector<int32_t> MpiState::members_of(MPI_Comm c, int32_t* offset) {
  TracerGuard guard;
  *offset = 0;
  MPI_Group g;
  if (pmpi::Comm_group(c, &g) != MPI_SUCCESS) return {};
  std::vector<int32_t> local = translate(g);
  pmpi::Group_free(&g);
  int inter = 0;
  pmpi::Comm_test_inter(c, &inter);
  if (!inter || pmpi::Comm_remote_group(c, &g) != MPI_SUCCESS) return local;
  std::vector<int32_t> remote = translate(g);
  pmpi::Group_free(&g);
  auto low = [](const std::vector<int32_t>& v) {
    return v.empty() ? INT32_MAX : *std::min_element(v.begin(), v.end());
  };
  if (low(local) < low(remote)) {
    *offset = int32_t(local.size());
    local.insert(local.end(), remote.begin(), remote.end());
    return local;
  }
  remote.insert(remote.end(), local.begin(), local.end());
  return remote;
}

int32_t MpiState::add_comm(MPI_Comm c, trace::CommOrigin origin, int32_t parent, uint64_t parent_seq, int64_t color,
                           int64_t key) {
  int32_t offset = 0;
  std::vector<int32_t> members = members_of(c, &offset);
  int is_inter_comm = 0;
  {
    TracerGuard guard;
    pmpi::Comm_test_inter(c, &is_inter_comm);
  }
  std::lock_guard<std::mutex> lk(mutex_);
  int32_t id = int32_t(comms_.size());
  comms_.push_back({id, origin, parent, parent_seq, color, key, std::move(members)});
  journal::note_comm(comms_.back());
  collectives_.emplace_back(0);
  remote_offset_.resize(comms_.size(), 0);
  remote_offset_[size_t(id)] = offset;
  // A dup of an intercommunicator whose remote group is listed first has
  // offset 0 too.
  inter_.resize(comms_.size(), 0);
  inter_[size_t(id)] = is_inter_comm;
  comm_ids_[c] = id;
  return id;
}

int32_t MpiState::add_comm_like(MPI_Comm c, int32_t parent, uint64_t parent_seq) {
  std::lock_guard<std::mutex> lk(mutex_);
  if (parent < 0 || size_t(parent) >= comms_.size()) return -1;
  int32_t id = int32_t(comms_.size());
  std::vector<int32_t> members = comms_[size_t(parent)].members;
  comms_.push_back({id, trace::CommOrigin::dup, parent, parent_seq, 0, 0, std::move(members)});
  journal::note_comm(comms_.back());
  collectives_.emplace_back(0);
  remote_offset_.resize(comms_.size(), 0);
  remote_offset_[size_t(id)] = remote_offset_[size_t(parent)];
  inter_.resize(comms_.size(), 0);
  inter_[size_t(id)] = inter_[size_t(parent)];
  comm_ids_[c] = id;
  return id;
}

int32_t MpiState::remote_offset(int32_t id) { return shape(id).offset; }

bool MpiState::is_inter(int32_t id) { return shape(id).inter; }

namespace {
// The communicator a thread used last, valid while no communicator has been
// freed since (handles are reused): most calls skip the table's lock.
struct LastComm {
  MPI_Comm handle;
  int32_t id;
  uint32_t generation;
  MpiState::Shape shape;               // of id
  std::atomic<uint64_t>* collectives;  // of id (entries never move)
};
constinit thread_local LastComm t_last_comm
    __attribute__((tls_model("initial-exec"))) = {MPI_Comm{}, -1, 0, {0, false}, nullptr};
}  // namespace

int32_t MpiState::comm_id(MPI_Comm c) {
  uint32_t gen = generation_.load(std::memory_order_acquire);
  if (t_last_comm.handle == c && t_last_comm.generation == gen && c != MPI_COMM_NULL) return t_last_comm.id;
  int32_t id = -1;
  {
    std::lock_guard<std::mutex> lk(mutex_);
    auto it = comm_ids_.find(c);
    if (it != comm_ids_.end()) id = it->second;
  }
  if (id < 0) {
    if (c == MPI_COMM_NULL) return -1;
    id = add_comm(c, trace::CommOrigin::unknown, -1, 0, 0, 0);
  }
  t_last_comm = {c, id, gen, shape_locked(id), collectives_of(id)};
  return id;
}

MpiState::Shape MpiState::shape_locked(int32_t id) {
  std::lock_guard<std::mutex> lk(mutex_);
  if (id < 0 || size_t(id) >= remote_offset_.size()) return {0, false};
  int32_t offset = remote_offset_[size_t(id)];
  bool inter = size_t(id) < inter_.size() && inter_[size_t(id)];
  return {offset, inter || offset != 0 || comms_[size_t(id)].origin == trace::CommOrigin::intercomm};
}

// The calling thread's last communicator answers without the lock (ids are
// never reused, and a communicator's shape never changes).
MpiState::Shape MpiState::shape(int32_t id) {
  if (t_last_comm.id == id && id >= 0) return t_last_comm.shape;
  return shape_locked(id);
}

void MpiState::forget_comm(MPI_Comm c) {
  std::lock_guard<std::mutex> lk(mutex_);
  comm_ids_.erase(c);
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

std::atomic<uint64_t>* MpiState::collectives_of(int32_t id) {
  std::lock_guard<std::mutex> lk(mutex_);
  return id >= 0 && size_t(id) < collectives_.size() ? &collectives_[size_t(id)] : nullptr;
}

// The calling thread's last communicator's count answers without the lock.
// A load and a store, not an atomic increment: MPI orders the collectives on
// one communicator, so two threads never count on one at once in a correct
// program (and the atomic keeps an erroneous one defined).
uint64_t MpiState::next_collective(int32_t id) {
  std::atomic<uint64_t>* count = t_last_comm.id == id && id >= 0 ? t_last_comm.collectives : collectives_of(id);
  if (!count) return 0;
  uint64_t n = count->load(std::memory_order_relaxed);
  count->store(n + 1, std::memory_order_relaxed);
  return n;
}

std::vector<trace::CommEntry> MpiState::comms() {
  std::lock_guard<std::mutex> lk(mutex_);
  return {comms_.begin(), comms_.end()};
}

void MpiState::encode_comms(trace::EncodedComms* out) {
  std::lock_guard<std::mutex> lk(mutex_);
  if (out->count > comms_.size()) *out = {};
  for (size_t i = out->count; i < comms_.size(); ++i) out->append(comms_[i]);
}

const std::vector<int32_t>& MpiState::members(int32_t id) {
  static const std::vector<int32_t> none;
  std::lock_guard<std::mutex> lk(mutex_);
  return id >= 0 && size_t(id) < comms_.size() ? comms_[size_t(id)].members : none;
}

int32_t MpiState::world_of(int32_t id, int64_t comm_rank) {
  const std::vector<int32_t>& m = members(id);
  return comm_rank >= 0 && size_t(comm_rank) < m.size() ? m[size_t(comm_rank)] : -1;
}

int64_t MpiState::add_request(MPI_Request r, const RequestInfo& info) {
  std::lock_guard<std::mutex> lk(mutex_);
  RequestInfo stored = info;
  stored.id = next_request_++;
  requests_[r].push_back(stored);
  return stored.id;
}

RequestInfo MpiState::take_request(MPI_Request r) {
  std::lock_guard<std::mutex> lk(mutex_);
  auto it = requests_.find(r);
  if (it == requests_.end()) return {};
  RequestInfo info = it->second.front();
  it->second.pop_front();
  if (it->second.empty()) requests_.erase(it);
  return info;
}

RequestInfo MpiState::peek_request(MPI_Request r) {
  std::lock_guard<std::mutex> lk(mutex_);
  auto it = requests_.find(r);
  return it == requests_.end() ? RequestInfo{} : it->second.front();
}

void MpiState::add_persistent(MPI_Request r, const RequestInfo& info) {
  std::lock_guard<std::mutex> lk(mutex_);
  persistent_[r] = info;
}

bool MpiState::persistent(MPI_Request r, RequestInfo* info) {
  std::lock_guard<std::mutex> lk(mutex_);
  auto it = persistent_.find(r);
  if (it == persistent_.end()) return false;
  if (info) *info = it->second;
  return true;
}

void MpiState::forget_persistent(MPI_Request r) {
  std::lock_guard<std::mutex> lk(mutex_);
  persistent_.erase(r);
}

void MpiState::add_message(MPI_Message m, const RequestInfo& info) {
  std::lock_guard<std::mutex> lk(mutex_);
  messages_[m] = info;
}

RequestInfo MpiState::take_message(MPI_Message m) {
  std::lock_guard<std::mutex> lk(mutex_);
  auto it = messages_.find(m);
  if (it == messages_.end()) {
    // MPI_MESSAGE_NO_PROC (a probe of MPI_PROC_NULL) or a message the tracer
    // never saw probed: a receive from MPI_PROC_NULL, on MPI_COMM_SELF (every
    // rank's table has it), which moves nothing.
    RequestInfo none;
    none.comm = 1;
    none.peer = trace::kProcNull;
    none.tag = trace::kAnyTag;
    none.kind = trace::kReqRecv;
    none.matched = true;
    return none;
  }
  RequestInfo info = it->second;
  messages_.erase(it);
  return info;
}

}  // namespace mpior::preload::mpi
