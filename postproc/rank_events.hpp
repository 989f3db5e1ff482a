// One rank's events across all its threads, in start order (MPI ordering
// across a rank's threads is by start time), without materialising them.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/cursor.hpp"
#include "trace/model.hpp"

namespace mpior::postproc {

// Where an event lives: the stream (thread) and its index in that stream's
// EventCursor sequence, counting every event at every depth.
struct EventPos {
  uint32_t stream = 0;
  uint64_t index = 0;
};

class RankEvents {
 public:
  RankEvents(const trace::RankTrace& trace, int32_t rank);
  // Next event by start_ns; ties and nested events keep their thread's order.
  bool next(trace::Event& ev, EventPos& pos);

 private:
  struct Head {
    trace::EventCursor cursor;
    trace::Event ev;
    uint64_t index = 0;
    bool live = false;
  };
  std::vector<Head> heads_;
};

}  // namespace mpior::postproc
