#include "postproc/restream.hpp"

#include <cstdlib>
#include <optional>

namespace mpior::postproc {

Restream::Restream(bool lossless) : lossless_(lossless), builder_(trace::BuilderOptions{.lossless = lossless}) {}

void Restream::begin(const trace::Stream& s, int32_t rank) {
  uint32_t base = sources_.empty() ? 0 : sources_.back().leaf_base + uint32_t(sources_.back().stream->leaves.size());
  sources_.push_back({&s, rank, base});
}

void Restream::copy(const trace::RawEvent& ev) {
  builder_.append(ev);
  ++appended_;
}

void Restream::insert(const trace::RawEvent& ev) {
  inserted_.push_back(appended_);
  copy(ev);
}

trace::Stream Restream::finish(int32_t rank, uint32_t thread) {
  trace::Stream out = builder_.snapshot(rank, thread);
  if (!lossless_) restore_timing(out, rank);
  return out;
}

namespace {

// The sources' events in the order they were copied.
class SourceEvents {
 public:
  SourceEvents(const std::vector<Restream::Source>& sources) : sources_(sources) {}
  // The next one, and its position among all sources' positions; false past the last.
  bool next(trace::Event& ev, uint32_t& position) {
    while (!cursor_ || !cursor_->next(ev)) {
      if (next_ == sources_.size()) return false;
      cursor_.emplace(*sources_[next_].stream, sources_[next_].rank, Restream::cursor_options());
      base_ = sources_[next_++].leaf_base;
    }
    position = base_ + ev.leaf;
    return true;
  }

 private:
  const std::vector<Restream::Source>& sources_;
  std::optional<trace::EventCursor> cursor_;
  size_t next_ = 0;
  uint32_t base_ = 0;
};

constexpr uint32_t kUnseen = UINT32_MAX, kSplit = UINT32_MAX - 1;

}  // namespace

// Pairs the rebuilt stream's events with the sources' (inserted ones aside),
// then gives each rebuilt position that holds every occurrence of the source
// positions it holds, and nothing else, their statistics merged. A position
// that does not (the builder folded differently, an inserted event joined
// it) keeps the means it was built from: its totals, not its spread.
void Restream::restore_timing(trace::Stream& out, int32_t rank) const {
  uint32_t positions =
      sources_.empty() ? 0 : sources_.back().leaf_base + uint32_t(sources_.back().stream->leaves.size());
  std::vector<uint32_t> target(positions, kUnseen);  // source position -> the rebuilt one holding its occurrences
  std::vector<bool> mixed(out.leaves.size(), false);
  trace::EventCursor rebuilt(out, rank, cursor_options());
  SourceEvents source(sources_);
  trace::Event ev, was;
  size_t next_insert = 0;
  for (uint64_t index = 0; rebuilt.next(ev); ++index) {
    if (next_insert < inserted_.size() && inserted_[next_insert] == index) {
      mixed[ev.leaf] = true;
      ++next_insert;
      continue;
    }
    uint32_t from = 0;
    if (!source.next(was, from)) return;  // the events do not pair up: leave the means
    uint32_t& t = target[from];
    // A gap measured from another event than in the source (the first of
    // a continuing program, one after an inserted send) is not the source's.
    if (std::abs(was.gap_ns - ev.gap_ns) > 1 || std::abs(was.dur_ns - ev.dur_ns) > 1) mixed[ev.leaf] = true;
    if (t == kUnseen) {
      t = ev.leaf;
    } else if (t != ev.leaf) {
      if (t != kSplit) mixed[t] = true;
      mixed[ev.leaf] = true;
      t = kSplit;
    }
  }
  uint32_t extra = 0;
  if (source.next(was, extra)) return;
  std::vector<trace::TimeStats> gap(out.leaves.size()), dur(out.leaves.size());
  for (const Source& s : sources_)
    for (uint32_t i = 0; i < s.stream->leaves.size(); ++i) {
      uint32_t t = target[s.leaf_base + i];
      if (t >= kSplit || mixed[t]) continue;
      gap[t].merge(s.stream->leaves[i].gap);
      dur[t].merge(s.stream->leaves[i].dur);
    }
  for (size_t i = 0; i < out.leaves.size(); ++i)
    if (gap[i].count() == out.leaves[i].gap.count() && dur[i].count() == out.leaves[i].dur.count() &&
        gap[i].count() > 0) {
      out.leaves[i].gap = gap[i];
      out.leaves[i].dur = dur[i];
    }
}

}  // namespace mpior::postproc
