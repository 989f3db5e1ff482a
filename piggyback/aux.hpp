// Auxiliary messages (thesis §2.1.1-2.1.2): one per application message,
// sent by the sender next to it on the communicator's shadow (a private
// duplicate, so an application receive with MPI_ANY_SOURCE or MPI_ANY_TAG can
// never take one). It carries the sender's decision and what the receiver
// needs to log the send on the sender's behalf (§2.1.5).
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "mpi_abi.hpp"
#include "receive_order.hpp"

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
};

class AuxMessenger {
 public:
  // Posts m to dest on shadow without waiting (buffers are pooled until the
  // send completes).
  void send(MPI_Comm shadow, int dest, const AuxMessage& m);
  // The auxiliary message of the message with (tag, seq) that src sent on
  // comm: from the ones already received out of order, or received now
  // (waiting: the sender posted it before its application message). *found
  // false: none came in time (the caller logs conservatively).
  AuxMessage receive(int32_t comm, MPI_Comm shadow, int src, int32_t tag, uint64_t seq, bool* found);
  // Before MPI_Finalize: lets pending sends go and drains unasked messages on
  // the shadows, without waiting for anything.
  void finish(const std::vector<MPI_Comm>& shadows);
  size_t in_flight() const { return in_flight_.size(); }
  uint64_t missing() const { return missing_; }

 private:
  struct Slot {
    AuxMessage msg;
    MPI_Request req = MPI_REQUEST_NULL;
  };
  void reclaim();
  bool next_from(MPI_Comm shadow, int src, AuxMessage* m);
  uint64_t missing_ = 0;
  std::deque<Slot> slots_;  // a deque: buffers stay where they are while MPI sends them
  std::vector<size_t> free_;
  std::deque<size_t> in_flight_;
  std::unordered_map<ChannelKey, std::vector<AuxMessage>, ChannelKeyHash> early_;  // (comm, src, 0)
};

}  // namespace mpior::piggyback
