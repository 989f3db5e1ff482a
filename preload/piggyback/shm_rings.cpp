#include "preload/piggyback/shm_rings.hpp"

#include <atomic>
#include <cstring>

#include "preload/mpi_state.hpp"
#include "preload/piggyback/aux.hpp"

namespace mpior::piggyback {

namespace pmpi = preload::mpi::pmpi;

namespace {
constexpr int kMaxLocal = 64;  // 64 x 64 rings of 4 KiB: 16 MiB per node at most
}

// One sender, one receiver. A slot is one cache line: the message and its
// number (1 + its index in the ring's history), stored last, so a message
// costs one line moving from the sender's core to the receiver's. The
// receiver publishes how far it read in `tail`, which the sender reads only
// when the ring looks full.
struct alignas(64) ShmSlot {
  AuxMessage msg;
  std::atomic<uint64_t> seq;
};
static_assert(sizeof(ShmSlot) == 64, "one auxiliary message per cache line");

struct ShmRings::Ring {
  alignas(64) std::atomic<uint64_t> tail;
  ShmSlot slots[kSlots];
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "rings between processes need lock-free atomics");

ShmRings::Ring* ShmRings::ring(int owner_local, int src_local) const {
  return reinterpret_cast<Ring*>(base_[size_t(owner_local)]) + src_local;
}

bool ShmRings::start(MPI_Comm world, int world_rank, int world_size) {
  if (pmpi::Comm_split_type(world, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node_) != MPI_SUCCESS)
    return false;
  pmpi::Comm_set_errhandler(node_, MPI_ERRORS_RETURN);
  pmpi::Comm_rank(node_, &me_);
  pmpi::Comm_size(node_, &size_);
  // Every member takes the same path: the size and the window's success are agreed.
  std::vector<int32_t> worlds(size_t(size_), -1);
  int32_t mine = world_rank;
  bool ok = size_ <= kMaxLocal && pmpi::Allgather(&mine, 1, MPI_INT, worlds.data(), 1, MPI_INT, node_) == MPI_SUCCESS;
  char* segment = nullptr;
  MPI_Aint bytes = ok ? MPI_Aint(sizeof(Ring)) * size_ : 0;
  int made = ok && pmpi::Win_allocate_shared(bytes, 1, MPI_INFO_NULL, node_, &segment, &win_) == MPI_SUCCESS;
  if (made) {
    std::memset(segment, 0, size_t(bytes));
    for (int i = 0; i < size_; ++i) new (reinterpret_cast<Ring*>(segment) + i) Ring{};
    pmpi::Win_lock_all(MPI_MODE_NOCHECK, win_);
  }
  int all = 0;
  pmpi::Allreduce(&made, &all, 1, MPI_INT, MPI_MIN, node_);  // also: every inbox is ready
  if (!all) {
    finish();
    return false;
  }
  base_.assign(size_t(size_), nullptr);
  for (int i = 0; i < size_; ++i) {
    MPI_Aint len = 0;
    int unit = 0;
    pmpi::Win_shared_query(win_, i, &len, &unit, &base_[size_t(i)]);
  }
  head_.assign(size_t(size_), 0);
  seen_tail_.assign(size_t(size_), 0);
  tail_.assign(size_t(size_), 0);
  local_of_.assign(size_t(world_size), -1);
  for (int i = 0; i < size_; ++i)
    if (worlds[size_t(i)] >= 0 && worlds[size_t(i)] < world_size) local_of_[size_t(worlds[size_t(i)])] = i;
  return true;
}

void ShmRings::finish() {
  local_of_.clear();
  base_.clear();
  head_.clear();
  seen_tail_.clear();
  tail_.clear();
  if (win_ != MPI_WIN_NULL) {
    pmpi::Win_unlock_all(win_);
    pmpi::Win_free(&win_);
  }
  if (node_ != MPI_COMM_NULL) pmpi::Comm_free(&node_);
}

bool ShmRings::put(int dest_world, const AuxMessage& m) {
  if (!local(dest_world)) return false;
  size_t d = size_t(local_of_[size_t(dest_world)]);
  Ring* r = ring(int(d), me_);
  uint64_t h = head_[d];
  if (h - seen_tail_[d] >= kSlots) {
    seen_tail_[d] = r->tail.load(std::memory_order_acquire);
    if (h - seen_tail_[d] >= kSlots) return false;
  }
  ShmSlot& slot = r->slots[h % kSlots];
  std::memcpy(&slot.msg, &m, sizeof m);
  slot.seq.store(h + 1, std::memory_order_release);
  head_[d] = h + 1;
  // The next slot's line, last read by the receiver, is fetched for writing
  // now, while the application's message travels, not at the next send,
  // where the wait would add to the message's latency.
  __builtin_prefetch(&r->slots[(h + 1) % kSlots], 1, 3);
  return true;
}

void ShmRings::drain(int src_world, std::vector<AuxMessage>& out) {
  if (!local(src_world)) return;
  size_t s = size_t(local_of_[size_t(src_world)]);
  Ring* r = ring(me_, int(s));
  uint64_t t = tail_[s], t0 = t;
  for (;; ++t) {
    const ShmSlot& slot = r->slots[t % kSlots];
    if (slot.seq.load(std::memory_order_acquire) != t + 1) break;
    out.emplace_back();
    std::memcpy(&out.back(), &slot.msg, sizeof(AuxMessage));
  }
  if (t == t0) return;
  tail_[s] = t;
  r->tail.store(t, std::memory_order_release);
}

bool ShmRings::take_next_if(int src_world, uint64_t key, int32_t tag, uint64_t seq, AuxMessage* m) {
  if (!local(src_world)) return false;
  size_t s = size_t(local_of_[size_t(src_world)]);
  Ring* r = ring(me_, int(s));
  uint64_t t = tail_[s];
  const ShmSlot& slot = r->slots[t % kSlots];
  if (slot.seq.load(std::memory_order_acquire) != t + 1) return false;
  if (slot.msg.comm_key != key || slot.msg.tag != tag || slot.msg.seq != seq) return false;
  std::memcpy(m, &slot.msg, sizeof(AuxMessage));  // before the sender may reuse the slot
  tail_[s] = t + 1;
  r->tail.store(t + 1, std::memory_order_release);
  return true;
}

}  // namespace mpior::piggyback
