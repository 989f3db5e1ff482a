// The node array of thesis §2.1.3/§2.1.6: for every world rank, whether this
// process has synchronised with it since its own last I/O. I/O "clears" the
// array; a communication is logged when a participant had I/O since it last
// synchronised with the others; afterwards the participants' entries are set.
//
// Clearing is O(1): entries hold the I/O epoch at which they were set, and
// I/O starts a new epoch, so no I/O call ever touches the array itself.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "preload/hot_data.hpp"

namespace mpior::piggyback {

// The process's I/O epoch: the tracer's hot path counts every recorded
// I/O call here with one relaxed store, whether or not the pruner exists yet
// (before it does, no peer was synchronised with, so the count is moot).
MPIOR_HOT_EXTERN std::atomic<uint64_t> g_io_epoch;  // hot_data.cpp: from 1

class NodeArray {
 public:
  NodeArray() = default;
  // Reads its epoch from `epoch` (the pruner's: g_io_epoch) instead of its own.
  explicit NodeArray(std::atomic<uint64_t>* epoch) : epoch_(epoch) {}
  void resize(int world_size) { synced_.assign(size_t(world_size), 0); }
  int size() const { return int(synced_.size()); }

  // An I/O call: nobody is synchronised with since.
  void on_io() { epoch_->store(epoch_->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }

  // True when this process had I/O since it last synchronised with `rank`
  // (or never did): a communication with it must be logged.
  bool pending(int32_t rank) const {
    return rank >= 0 && size_t(rank) < synced_.size() && synced_[size_t(rank)] != epoch();
  }
  bool pending_any(std::span<const int32_t> ranks, int32_t self) const {
    for (int32_t r : ranks)
      if (r != self && pending(r)) return true;
    return false;
  }

  void mark(int32_t rank) {
    if (rank >= 0 && size_t(rank) < synced_.size()) synced_[size_t(rank)] = epoch();
  }
  void mark_all(std::span<const int32_t> ranks) {
    uint64_t e = epoch();
    for (int32_t r : ranks)
      if (r >= 0 && size_t(r) < synced_.size()) synced_[size_t(r)] = e;
  }

  // A synchronisation that took effect at an earlier epoch (a nonblocking
  // collective: from its post, seen at its completion). I/O since then keeps
  // the peers pending; a later synchronisation already noted stays.
  uint64_t now() const { return epoch(); }
  void mark_at(int32_t rank, uint64_t e) {
    if (rank >= 0 && size_t(rank) < synced_.size() && synced_[size_t(rank)] < e) synced_[size_t(rank)] = e;
  }
  void mark_all_at(std::span<const int32_t> ranks, uint64_t e) {
    for (int32_t r : ranks) mark_at(r, e);
  }

 private:
  uint64_t epoch() const { return epoch_->load(std::memory_order_relaxed); }
  // Starts at 1 and entries at 0: before any synchronisation, every peer is
  // pending, so the first synchronisation with each is logged (thesis §2.1.6).
  std::atomic<uint64_t> own_epoch_{1};
  std::atomic<uint64_t>* epoch_ = &own_epoch_;
  std::vector<uint64_t> synced_;
};

}  // namespace mpior::piggyback
