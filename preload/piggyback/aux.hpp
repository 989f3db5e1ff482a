// Auxiliary messages (thesis §2.1.1-2.1.2): one per application message,
// sent by the sender next to it on the tracer's shadow of MPI_COMM_WORLD (a
// private communicator, so an application receive with MPI_ANY_SOURCE or
// MPI_ANY_TAG can never take one), to the receiver's world rank, carrying
// its communicator's channel key. It carries the sender's decision and what the receiver
// needs to log the send on the sender's behalf (§2.1.5).
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "preload/mpi_abi.hpp"
#include "preload/piggyback/receive_order.hpp"
#include "preload/piggyback/shm_rings.hpp"

namespace mpior::piggyback {

struct AuxMessage {
  int32_t decision = 0;  // 1: the sender logs this send itself
  int32_t tag = 0;       // the application message's tag
  uint64_t seq = 0;      // its number in its channel (comm, sender, receiver, tag)
  int64_t position = 0;  // events the sender's thread had recorded before the send
  int64_t start_ns = 0;  // when the send started, in the sender's trace time
  int64_t bytes = 0;
  int32_t thread = 0;  // the sender's thread index
  uint16_t kind = 0;   // the sender's call (trace::Kind)
  uint16_t pad = 0;
  uint64_t comm_key = 0;  // the communicator's channel key (equal on every member)
};

class AuxMessenger {
 public:
  // Collective over shadow (inside MPI_Init): also the node's rings, unless
  // MPIOR_AUX_SHM=0.
  void start(MPI_Comm shadow, int me, int size);
  // Posts m to dest (world rank) without waiting (buffers are pooled until
  // the send completes).
  void send(int dest, const AuxMessage& m);
  // The auxiliary message of the message with (tag, seq) that src (world
  // rank) sent on the communicator with channel key `key`: from the ones
  // already received out of order, or received now (waiting: the sender
  // posted it before its application message). *found false: none came in
  // time (the caller logs conservatively).
  AuxMessage receive(uint64_t key, int src, int32_t tag, uint64_t seq, bool* found);
  // Before MPI_Finalize: lets pending sends go and drains unasked messages,
  // without waiting for anything.
  void finish();
  size_t in_flight() const { return in_flight_.size(); }
  uint64_t missing() const { return missing_; }

 private:
  struct Slot {
    AuxMessage msg;
    MPI_Request req = MPI_REQUEST_NULL;
  };
  struct EarlyKey {
    uint64_t key;
    int32_t src;
    bool operator==(const EarlyKey&) const = default;
  };
  struct EarlyHash {
    size_t operator()(const EarlyKey& k) const { return size_t((k.key ^ uint32_t(k.src)) * 0x9E3779B97F4A7C15ull); }
  };
  void reclaim();
  bool next_from(int src, AuxMessage* m);
  bool take_early(const EarlyKey& key, int32_t tag, uint64_t seq, AuxMessage* m);
  void stash(int src, const AuxMessage& m) { early_[EarlyKey{m.comm_key, src}].push_back(m); }
  MPI_Comm shadow_ = MPI_COMM_NULL;
  ShmRings rings_;
  bool use_rings_ = false;
  std::vector<AuxMessage> drained_;
  uint64_t missing_ = 0;
  std::deque<Slot> slots_;  // a deque: buffers stay where they are while MPI sends them
  std::vector<size_t> free_;
  std::deque<size_t> in_flight_;
  std::unordered_map<EarlyKey, std::vector<AuxMessage>, EarlyHash> early_;
};

}  // namespace mpior::piggyback
