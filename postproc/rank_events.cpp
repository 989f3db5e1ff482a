#include "postproc/rank_events.hpp"

namespace mpior::postproc {

RankEvents::RankEvents(const trace::RankTrace& trace, int32_t rank) {
  heads_.reserve(trace.streams.size());
  for (const trace::Stream& s : trace.streams) {
    Head h{trace::EventCursor(s, rank), {}, 0, false};
    h.live = h.cursor.next(h.ev);
    heads_.push_back(std::move(h));
  }
}

bool RankEvents::next(trace::Event& ev, EventPos& pos) {
  // Ranks have few threads: a linear scan beats a heap here.
  Head* best = nullptr;
  uint32_t best_stream = 0;
  for (uint32_t i = 0; i < heads_.size(); ++i) {
    Head& h = heads_[i];
    if (h.live && (!best || h.ev.start_ns < best->ev.start_ns)) {
      best = &h;
      best_stream = i;
    }
  }
  if (!best) return false;
  ev = best->ev;
  pos = {best_stream, best->index};
  ++best->index;
  best->live = best->cursor.next(best->ev);
  return true;
}

}  // namespace mpior::postproc
