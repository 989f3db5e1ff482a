// Which message of its channel a completed receive got. A channel is
// (communicator, source, destination, tag); MPI delivers a channel's messages
// in order to the receives that can match them, in the order they were posted
// (non-overtaking). Completion order may differ (thesis Figure 4.1: two
// receives of one channel completed in reverse order), and wildcard receives
// only learn their channel when they complete. So when a receive completes,
// every earlier-posted receive that could have matched its message has
// already been matched by MPI: the tracer asks for their statuses (without
// completing them) and numbers them first. The sender numbers its messages
// per channel too and sends the number with its auxiliary message, so the
// receiver picks exactly the right one.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <unordered_map>

namespace mpior::piggyback {

struct ChannelKey {
  int32_t comm, peer, tag;
  bool operator==(const ChannelKey&) const = default;
};
struct ChannelKeyHash {
  size_t operator()(const ChannelKey& k) const {
    uint64_t h = (uint64_t(uint32_t(k.comm)) << 32) ^ uint32_t(k.peer);
    h = (h ^ (h >> 29)) * 0xBF58476D1CE4E5B9ull;
    return size_t(h ^ (uint64_t(uint32_t(k.tag)) * 0x94D049BB133111EBull));
  }
};

// The next sequence number of each channel. A ping-pong asks the same
// channel call after call: the last one asked answers without hashing (the
// map's nodes never move, and entries are never erased).
class ChannelCounters {
 public:
  uint64_t next(const ChannelKey& k) {
    if (!(last_ && last_key_ == k)) {
      last_ = &next_[k];
      last_key_ = k;
    }
    return (*last_)++;
  }

 private:
  std::unordered_map<ChannelKey, uint64_t, ChannelKeyHash> next_;
  ChannelKey last_key_{};
  uint64_t* last_ = nullptr;
};

struct Envelope {
  int32_t source = 0;  // communicator rank; wildcards as given at post time (-1 any)
  int32_t tag = 0;     // -1 any
};

class ReceiveOrder {
 public:
  // Status of a posted receive that MPI has matched: fills the envelope it
  // matched and returns true, or false when it never will (cancelled).
  using StatusProbe = std::function<bool(uint64_t handle, Envelope* matched)>;

  explicit ReceiveOrder(StatusProbe probe) : probe_(std::move(probe)) {}

  // A nonblocking receive was posted with these (possibly wildcard) values.
  void posted(int32_t comm, uint64_t handle, Envelope given);
  // The receive `handle` completed with `status`: its sequence number in the
  // channel (comm, status.source, status.tag).
  uint64_t completed(int32_t comm, uint64_t handle, Envelope status);
  // A blocking receive (posted after every outstanding one) completed.
  uint64_t completed_blocking(int32_t comm, Envelope status);
  // A posted receive went away without a message (cancelled, freed).
  void forget(int32_t comm, uint64_t handle);
  size_t outstanding() const;

 private:
  struct Pending {
    uint64_t handle;
    Envelope given;
    bool numbered = false;
    uint64_t seq = 0;
  };
  using Queue = std::list<Pending>;
  uint64_t number(int32_t comm, Envelope status);
  void number_earlier(int32_t comm, Queue& q, Queue::iterator end, Envelope status);

  StatusProbe probe_;
  std::unordered_map<int32_t, Queue> pending_;
  ChannelCounters next_;
};

// Sender side: the next sequence number of each (comm, dest, tag).
class SendOrder {
 public:
  uint64_t next(int32_t comm, int32_t dest, int32_t tag) { return next_.next({comm, dest, tag}); }

 private:
  ChannelCounters next_;
};

}  // namespace mpior::piggyback
