#include "mpi_state.hpp"

#include "real_table.hpp"
#include "thread_state.hpp"

namespace mpior::preload::mpi {

namespace pmpi {
#define MPIOR_PMPI_DEF(name) decltype(&::PMPI_##name) name = nullptr;
MPIOR_PMPI_HELPERS(MPIOR_PMPI_DEF)
#undef MPIOR_PMPI_DEF

bool resolve() noexcept {
  bool ok = true;
#define MPIOR_PMPI_RESOLVE(name)                                                    \
  if (!name) name = reinterpret_cast<decltype(name)>(real::resolve("PMPI_" #name)); \
  ok = ok && name;
  MPIOR_PMPI_HELPERS(MPIOR_PMPI_RESOLVE)
#undef MPIOR_PMPI_RESOLVE
  return ok;
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
  collectives_.assign(2, 0);
  comm_ids_[MPI_COMM_WORLD] = 0;
  comm_ids_[MPI_COMM_SELF] = 1;
}

std::vector<int32_t> MpiState::members_of(MPI_Comm c) {
  TracerGuard guard;
  std::vector<int32_t> out;
  MPI_Group g, world;
  if (pmpi::Comm_group(c, &g) != MPI_SUCCESS) return out;
  pmpi::Comm_group(MPI_COMM_WORLD, &world);
  int n = 0;
  pmpi::Group_size(g, &n);
  std::vector<int> local(static_cast<size_t>(n)), global(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) local[size_t(i)] = i;
  pmpi::Group_translate_ranks(g, n, local.data(), world, global.data());
  out.assign(global.begin(), global.end());
  pmpi::Group_free(&g);
  pmpi::Group_free(&world);
  return out;
}

int32_t MpiState::add_comm(MPI_Comm c, trace::CommOrigin origin, int32_t parent, uint64_t parent_seq, int64_t color,
                           int64_t key) {
  std::vector<int32_t> members = members_of(c);
  std::lock_guard<std::mutex> lk(mutex_);
  int32_t id = int32_t(comms_.size());
  comms_.push_back({id, origin, parent, parent_seq, color, key, std::move(members)});
  collectives_.push_back(0);
  comm_ids_[c] = id;
  return id;
}

namespace {
// The communicator a thread used last, valid while no communicator has been
// freed since (handles are reused): most calls skip the table's lock.
struct LastComm {
  MPI_Comm handle;
  int32_t id;
  uint32_t generation;
};
constinit thread_local LastComm t_last_comm __attribute__((tls_model("initial-exec"))) = {MPI_Comm{}, -1, 0};
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
  t_last_comm = {c, id, gen};
  return id;
}

void MpiState::forget_comm(MPI_Comm c) {
  std::lock_guard<std::mutex> lk(mutex_);
  comm_ids_.erase(c);
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

uint64_t MpiState::next_collective(int32_t id) {
  std::lock_guard<std::mutex> lk(mutex_);
  if (id < 0 || size_t(id) >= collectives_.size()) return 0;
  return collectives_[size_t(id)]++;
}

std::vector<trace::CommEntry> MpiState::comms() {
  std::lock_guard<std::mutex> lk(mutex_);
  return {comms_.begin(), comms_.end()};
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

MpiState& state() {
  static auto* s = new MpiState();
  return *s;
}

}  // namespace mpior::preload::mpi
