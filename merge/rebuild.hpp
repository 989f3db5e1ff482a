// A merged plan's streams changed event by event: each rank's events read
// back, some left out or changed, and the rebuilt streams merged again.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/builder.hpp"
#include "trace/cursor.hpp"
#include "trace/model.hpp"

namespace mpior::merge {

// The events of `s` for `rank`, each passed to keep(ev, raw), which says
// whether it stays and may change `raw`, built into a stream of that rank.
template <class Keep>
trace::Stream rebuilt(const trace::Stream& s, int32_t rank, Keep keep) {
  trace::StreamBuilder b(trace::BuilderOptions{.lossless = s.lossless});
  trace::EventCursor c(s, rank);
  trace::Event ev;
  while (c.next(ev)) {
    trace::RawEvent raw = ev.raw();
    if (keep(ev, raw)) b.append(raw);
  }
  return b.snapshot(rank, s.thread);
}

// Streams of one rank each (rebuilt ones) merged again. Ordered by thread,
// then rank, first: merge_streams merges a group only while its ranks ascend.
std::vector<trace::Stream> merge_rebuilt(std::vector<trace::Stream> streams);

}  // namespace mpior::merge
