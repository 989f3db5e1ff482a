// Pairs every receive with its send by MPI's non-overtaking rule: on each
// channel (communicator, source, destination, tag), the k-th send the source
// made pairs with the k-th receive the destination posted whose completion
// status names that source and tag. Without a pair sink only per-channel
// counts are kept, so memory follows channels and ranks, not messages.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "postproc/scope.hpp"
#include "postproc/trace_set.hpp"
#include "trace/event.hpp"

namespace mpior::postproc {

struct Channel {
  int32_t comm = 0;    // global communicator id
  int32_t source = 0;  // world ranks
  int32_t dest = 0;
  int64_t tag = 0;
  auto operator<=>(const Channel&) const = default;
};

// One side of a message: the event in its rank's trace (the stream's thread,
// and the event's index in that stream's EventCursor sequence).
struct MessageEnd {
  int32_t rank = 0;
  uint32_t thread = 0;
  uint64_t event = 0;
  bool operator==(const MessageEnd&) const = default;
};

struct MessagePair {
  Channel channel;
  uint64_t seq = 0;  // k: the k-th message on the channel, from 0
  MessageEnd send, recv;
};
using PairSink = std::function<void(const MessagePair&)>;

struct ChannelCount {
  Channel channel;
  uint64_t sent = 0, received = 0;
};

struct PairingStats {
  uint64_t channels = 0;
  uint64_t messages = 0;                          // paired
  uint64_t unreceived = 0;                        // sends no receive matched
  uint64_t never_completed = 0;                   // receives posted but never completed: not messages
  uint64_t orphan_completions = 0;                // receive completions whose posting is not in the trace
  std::vector<ChannelCount> unreceived_channels;  // sorted by channel
};

class MessageMatcher {
 public:
  // With a sink, finish() hands it every pair, channel by channel in order.
  explicit MessageMatcher(const TraceSet& set, PairSink sink = {});
  ~MessageMatcher();
  MessageMatcher(const MessageMatcher&) = delete;
  MessageMatcher& operator=(const MessageMatcher&) = delete;

  // Ranks may come in any order; each rank's events in its MPI order.
  void begin_rank(const RankScope& scope);
  void observe(const trace::Event& ev, const EventPos& pos);
  void end_rank();
  // Throws ToolError for a receive no send matches (the replay would hang).
  PairingStats finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mpior::postproc
