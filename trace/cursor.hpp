// The one way to read a stream: expands loops lazily, one event at a time, for
// one rank of the stream. Memory is proportional to the positions visited and
// the loop nesting, never to the number of iterations.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "trace/event.hpp"
#include "trace/model.hpp"

namespace mpior::trace {

struct CursorOptions {
  // Timing of statistical (non-lossless) streams: each position's mean, or a
  // draw from its histogram (deterministic for a given seed).
  enum class Timing : uint8_t { mean, sample } timing = Timing::mean;
  uint64_t seed = 1;
};

// The greatest value p yields for any rank of s (its rank variants' values
// plus their multiples of the rank included), without reading the stream.
int64_t param_max(const Stream& s, const Param& p);

class EventCursor {
 public:
  EventCursor(const Stream& stream, int32_t rank, CursorOptions opt = {});
  ~EventCursor();
  EventCursor(EventCursor&&) noexcept;
  EventCursor& operator=(EventCursor&&) noexcept;

  // Fills ev with the next occurrence; false at the end of the stream.
  bool next(Event& ev);
  uint64_t delivered() const { return delivered_; }

 private:
  struct ParamReader;
  struct LeafState;
  struct Frame {
    uint32_t body, end;
    uint64_t iter, count;  // a loop of one call may run more than 2^32 times
  };
  int64_t read(const Param& p, std::unique_ptr<ParamReader>& state);
  int64_t read_time(const Leaf& leaf, LeafState& st, bool gap);
  LeafState& leaf_state(uint32_t leaf);
  bool enter_or_skip_loop(uint32_t pos);
  void fill(const Leaf& leaf, uint32_t index, Event& ev);

  const Stream* stream_;
  int32_t rank_;
  CursorOptions opt_;
  uint64_t rng_;
  uint32_t pos_ = 0;
  [[noreturn]] void throw_overrun(uint32_t leaf) const;
  uint64_t delivered_ = 0;
  std::vector<uint64_t> emitted_;  // per leaf: occurrences delivered (bounded by its statistics)
  std::vector<Frame> frames_;
  std::vector<std::unique_ptr<LeafState>> leaves_;
  std::vector<std::unique_ptr<ParamReader>> loop_iters_;
  std::vector<int64_t> ref_;  // per depth: where the next gap is measured from
};

}  // namespace mpior::trace
