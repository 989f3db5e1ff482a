#include "trace/cursor.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "trace/codec.hpp"

namespace mpior::trace {

// Values of one Param for the cursor's rank.
struct EventCursor::ParamReader {
  SeqCursor seq;
  int64_t offset = 0;  // scale * rank of the variant that holds the rank
};

struct EventCursor::LeafState {
  std::array<std::unique_ptr<ParamReader>, kNumArgs> args;
  std::unique_ptr<ParamReader> ret, err, gap, dur;
  // A position whose values and timing never change, seen twice: its event,
  // copied instead of decoded again (the replay's cost per event).
  std::unique_ptr<Event> fixed;
};

int64_t param_max(const Stream& s, const Param& p) {
  int64_t best = seq_max(s.view(p.seq));
  if (p.ranked >= 0 && size_t(p.ranked) < s.ranked.size()) {
    for (const RankVariant& v : s.ranked[size_t(p.ranked)]) {
      int64_t rank_part = v.scale >= 0 ? v.scale * seq_max(s.view(v.ranks)) : v.scale * seq_min(s.view(v.ranks));
      best = std::max(best, seq_max(s.view(v.seq)) + rank_part);
    }
  }
  return best;
}

EventCursor::EventCursor(const Stream& stream, int32_t rank, CursorOptions opt)
    : stream_(&stream), rank_(rank), opt_(opt), rng_(opt.seed * 0x9E3779B97F4A7C15ull + 1) {
  leaves_.resize(stream.leaves.size());
  emitted_.assign(stream.leaves.size(), 0);
  loop_iters_.resize(stream.nodes.size());
  ref_.assign(8, 0);
}

EventCursor::~EventCursor() = default;
EventCursor::EventCursor(EventCursor&&) noexcept = default;
EventCursor& EventCursor::operator=(EventCursor&&) noexcept = default;

namespace {
inline bool is_constant(const Param& p) { return p.ranked < 0 && p.seq.len <= 1; }

__attribute__((noinline)) void grow(std::vector<int64_t>& ref, size_t size) {
  ref.resize(size, ref.empty() ? 0 : ref.back());
}

// Start and end from the gap, measured from the previous event at its depth.
inline void place(std::vector<int64_t>& ref, Event& ev) {
  size_t d = ev.depth;
  if (ref.size() < d + 2) [[unlikely]]
    grow(ref, d + 2);
  ev.start_ns = ref[d] + ev.gap_ns;
  ev.end_ns = ev.start_ns + ev.dur_ns;
  ref[d] = ev.end_ns;
  ref[d + 1] = ev.start_ns;  // children measure their gaps from the parent's start
}
}  // namespace

int64_t EventCursor::read(const Param& p, std::unique_ptr<ParamReader>& state) {
  if (is_constant(p)) return p.seq.len ? stream_->values.view(p.seq)[0].v : 0;
  if (!state) {
    state = std::make_unique<ParamReader>();
    SeqRef seq = p.seq;
    if (p.ranked >= 0) {
      for (const RankVariant& v : stream_->ranked[size_t(p.ranked)]) {
        if (seq_contains(stream_->view(v.ranks), rank_)) {
          seq = v.seq;
          state->offset = v.scale * rank_;
          break;
        }
      }
    }
    state->seq = SeqCursor(stream_->view(seq));
  }
  return state->seq.next() + state->offset;
}

EventCursor::LeafState& EventCursor::leaf_state(uint32_t leaf) {
  auto& st = leaves_[leaf];
  if (!st) st = std::make_unique<LeafState>();
  return *st;
}

int64_t EventCursor::read_time(const Leaf& leaf, LeafState& st, bool gap) {
  if (stream_->lossless) return gap ? read(leaf.exact_gap, st.gap) : read(leaf.exact_dur, st.dur);
  const TimeStats& ts = gap ? leaf.gap : leaf.dur;
  if (opt_.timing == CursorOptions::Timing::mean || ts.count() <= 1) return std::llround(ts.mean());
  auto uniform = [this] {  // splitmix64
    uint64_t z = (rng_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return double((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  };
  double a = uniform(), b = uniform();
  return ts.sample(a, b);
}

void EventCursor::fill(const Leaf& leaf, uint32_t index, Event& ev) {
  if (const LeafState* known = leaves_[index].get(); known && known->fixed) {
    ev = *known->fixed;
    place(ref_, ev);
    return;
  }
  // Positions whose values never change (every position of a flat trace)
  // need no per-position state.
  static LeafState unused;
  bool varies = stream_->lossless || !is_constant(leaf.ret) || !is_constant(leaf.err);
  for (const Param& p : leaf.args) varies = varies || !is_constant(p);
  LeafState& st = varies ? leaf_state(index) : unused;
  ev.kind = leaf.kind;
  ev.depth = leaf.depth;
  ev.flags = leaf.flags;
  ev.thread = stream_->thread;
  ev.rank = rank_;
  ev.leaf = index;
  ev.callsite = leaf.callsite;
  for (int i = 0; i < kNumArgs; ++i) ev.args[size_t(i)] = read(leaf.args[size_t(i)], st.args[size_t(i)]);
  ev.ret = read(leaf.ret, st.ret);
  ev.err = int32_t(read(leaf.err, st.err));
  ev.gap_ns = read_time(leaf, st, true);
  ev.dur_ns = read_time(leaf, st, false);
  place(ref_, ev);
  bool fixed_timing = opt_.timing == CursorOptions::Timing::mean || (leaf.gap.count() <= 1 && leaf.dur.count() <= 1);
  if (!varies && fixed_timing && emitted_[index] == 2) leaf_state(index).fixed = std::make_unique<Event>(ev);
}

// Pushes a frame for the loop at pos, or skips it when it runs zero times.
bool EventCursor::enter_or_skip_loop(uint32_t pos) {
  const Node& n = stream_->nodes[pos];
  int64_t count = read(n.iters, loop_iters_[pos]);
  if (count <= 0) {
    pos_ = pos + 1 + n.index;
    return false;
  }
  frames_.push_back({pos + 1, pos + 1 + n.index, 0, uint64_t(count)});
  pos_ = pos + 1;
  return true;
}

namespace {
// A position occurs as often as its timing statistics counted, summed over
// the stream's ranks (extrapolation scales that count by its own models:
// a wide margin). A loop count far beyond it is a damaged stream, which
// would otherwise expand for hours.
uint64_t occurrence_bound(const Leaf& leaf) { return leaf.gap.count() * 1024 + (uint64_t(1) << 20); }
}  // namespace

void EventCursor::throw_overrun(uint32_t leaf) const {
  throw FormatError("stream of thread " + std::to_string(stream_->thread) + ": trace position " + std::to_string(leaf) +
                    " (" + std::string(name(stream_->leaves[leaf].kind)) + ") repeats far more often than the " +
                    std::to_string(stream_->leaves[leaf].gap.count()) +
                    " times its statistics count: a damaged loop count");
}

bool EventCursor::next(Event& ev) {
  const auto& nodes = stream_->nodes;
  for (;;) {
    while (!frames_.empty() && pos_ >= frames_.back().end) {
      Frame& f = frames_.back();
      if (++f.iter < f.count) {
        pos_ = f.body;
        break;
      }
      frames_.pop_back();
    }
    if (pos_ >= nodes.size()) return false;
    const Node& n = nodes[pos_];
    if (n.loop) {
      enter_or_skip_loop(pos_);
      continue;
    }
    const Leaf& leaf = stream_->leaves[n.index];
    if (++emitted_[n.index] > occurrence_bound(leaf)) throw_overrun(n.index);
    fill(leaf, n.index, ev);
    ++pos_;
    ++delivered_;
    return true;
  }
}

}  // namespace mpior::trace
