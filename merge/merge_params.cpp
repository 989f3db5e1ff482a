#include "merge/merge_params.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace mpior::merge {

using trace::SeqItem;

namespace {

constexpr SeqItem kZero{0, 0, 0};
// The search is greedy: each round tries scale 0 and the scales most often
// seen between neighbouring ranks, keeps the one that leaves fewest groups and
// takes every group of two ranks or more. What is left after the last round
// gets one variant per distinct sequence: correct, just bigger.
constexpr int kMaxRounds = 8;
constexpr size_t kMaxScales = 3;

// Values minus scale × rank are compared in 128 bits so no product overflows;
// a rank whose rank-0 values would not fit in 64 bits gets a variant of its own.
using Wide = __int128;

bool fits(Wide v) { return v >= Wide(INT64_MIN) && v <= Wide(INT64_MAX); }

uint64_t mix(uint64_t h, uint64_t v) {
  v *= 0xBF58476D1CE4E5B9ull;
  v ^= v >> 31;
  return (h ^ v) * 0x94D049BB133111EBull + 0x9E3779B97F4A7C15ull;
}

// Ranks whose sequences differ only in how often the last top-level loop
// runs share the longest: the cursor reads one value per occurrence, and a
// sequence that ends in a loop holds every occurrence's value (the builder
// cuts only constants short, to one scalar, and those never end in a loop),
// so the shorter ones read a prefix of it. Offsets in a loop whose trip count
// differs by rank thus cost one variant, not one per rank. (check_plan, and
// mpior-post --verify, would catch a stream that broke this.)
constexpr size_t kNoLoop = SIZE_MAX;

// Index of the last top-level item when it is a loop, else kNoLoop.
size_t last_top_loop(std::span<const SeqItem> seq) {
  size_t last = 0;
  for (size_t i = 0; i < seq.size(); i += 1 + seq[i].span) last = i;
  return !seq.empty() && seq[last].is_loop() ? last : kNoLoop;
}

// Same items but for the values of scalars and the count of the last top-level loop.
bool same_shape(std::span<const SeqItem> a, std::span<const SeqItem> b) {
  if (a.size() != b.size()) return false;
  size_t last = last_top_loop(a);
  if (last_top_loop(b) != last) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].is_loop() != b[i].is_loop() || a[i].span != b[i].span) return false;
    if (a[i].is_loop() && (a[i].v != b[i].v || (i != last && a[i].count != b[i].count))) return false;
  }
  return true;
}

uint64_t shape_hash(std::span<const SeqItem> seq) {
  uint64_t h = seq.size();
  size_t last = last_top_loop(seq);
  for (size_t i = 0; i < seq.size(); ++i) {
    const SeqItem& it = seq[i];
    if (!it.is_loop())
      h = mix(h, 0x5CA1A2);
    else
      h = mix(mix(mix(h, uint64_t(it.v)), i == last ? 0 : it.count), it.span);
  }
  return h;
}

// For a and b of one shape: the shift from a's scalars to b's, if it is one for all.
bool uniform_shift(std::span<const SeqItem> a, std::span<const SeqItem> b, int64_t* shift) {
  bool have = false;
  Wide s = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].is_loop()) continue;
    Wide d = Wide(b[i].v) - a[i].v;
    if (have && d != s) return false;
    s = d;
    have = true;
  }
  if (!fits(s)) return false;
  *shift = int64_t(s);
  return true;
}

// Hash of the scalars rank 0 would have if r's values were rank 0's plus
// scale × rank; false when they do not fit.
bool normalized_hash(const RankValues& r, int64_t scale, uint64_t* out) {
  Wide offset = Wide(scale) * r.rank;
  if (!fits(offset)) return false;
  uint64_t h = 0;
  for (const SeqItem& it : r.seq) {
    if (it.is_loop()) continue;
    Wide v = Wide(it.v) - offset;
    if (!fits(v)) return false;
    h = mix(h, uint64_t(int64_t(v)));
  }
  *out = h;
  return true;
}

// For a and b of one shape: whether b's values are a's plus scale × (b.rank - a.rank).
bool same_normalized(const RankValues& a, const RankValues& b, int64_t scale) {
  Wide shift = Wide(scale) * (int64_t(b.rank) - a.rank);
  for (size_t i = 0; i < a.seq.size(); ++i)
    if (!a.seq[i].is_loop() && Wide(b.seq[i].v) - a.seq[i].v != shift) return false;
  return true;
}

using Group = std::vector<size_t>;  // indices into the ranks, ascending

// Groups of members (all of one shape) that share their rank-0 values under scale.
std::vector<Group> group_by_scale(std::span<const RankValues> ranks, const Group& members, int64_t scale) {
  std::vector<Group> groups;
  std::unordered_map<uint64_t, std::vector<size_t>> by_hash;
  for (size_t m : members) {
    uint64_t h = 0;
    if (!normalized_hash(ranks[m], scale, &h)) {
      groups.push_back({m});
      continue;
    }
    auto& candidates = by_hash[h];
    auto match = std::find_if(candidates.begin(), candidates.end(),
                              [&](size_t g) { return same_normalized(ranks[groups[g].front()], ranks[m], scale); });
    if (match != candidates.end()) {
      groups[*match].push_back(m);
    } else {
      candidates.push_back(groups.size());
      groups.push_back({m});
    }
  }
  return groups;
}

// 0, then the scales that rank pairs next to each other (or one apart) in
// members suggest, most suggested first.
std::vector<int64_t> candidate_scales(std::span<const RankValues> ranks, const Group& members) {
  std::unordered_map<int64_t, size_t> votes;
  for (size_t step = 1; step <= 2; ++step) {
    for (size_t i = 0; i + step < members.size(); ++i) {
      const RankValues& a = ranks[members[i]];
      const RankValues& b = ranks[members[i + step]];
      int64_t shift = 0;
      if (!uniform_shift(a.seq, b.seq, &shift)) continue;
      int64_t apart = int64_t(b.rank) - a.rank;
      if (shift % apart == 0 && shift / apart != 0) ++votes[shift / apart];
    }
  }
  std::vector<std::pair<int64_t, size_t>> by_votes(votes.begin(), votes.end());
  std::sort(by_votes.begin(), by_votes.end(), [](const auto& x, const auto& y) {
    if (x.second != y.second) return x.second > y.second;
    // Ties: the smaller step, +1 before -1: a stencil's neighbour is rank + 1
    // for all but the last rank, not an accident of two ranks on a line.
    if (std::abs(x.first) != std::abs(y.first)) return std::abs(x.first) < std::abs(y.first);
    return x.first > y.first;
  });
  std::vector<int64_t> out{0};
  for (size_t i = 0; i < by_votes.size() && out.size() <= kMaxScales; ++i) out.push_back(by_votes[i].first);
  return out;
}

struct Found {
  Group members;
  int64_t scale = 0;
};

// Variants for members, all of one shape.
void split_shape(std::span<const RankValues> ranks, Group members, std::vector<Found>& out) {
  for (int round = 0; round < kMaxRounds && members.size() >= 2; ++round) {
    std::vector<Group> best;
    int64_t best_scale = 0;
    for (int64_t scale : candidate_scales(ranks, members)) {
      std::vector<Group> groups = group_by_scale(ranks, members, scale);
      if (best.empty() || groups.size() < best.size()) {
        best = std::move(groups);
        best_scale = scale;
      }
    }
    if (best.size() == members.size()) break;  // no two ranks agree under any scale tried
    Group rest;
    for (Group& g : best) {
      if (g.size() == 1)
        rest.push_back(g.front());
      else
        out.push_back({std::move(g), best_scale});
    }
    std::sort(rest.begin(), rest.end());
    members = std::move(rest);
  }
  for (Group& g : group_by_scale(ranks, members, 0)) out.push_back({std::move(g), 0});
}

// Ranks by sequence shape (same_shape), in order of first appearance.
std::vector<Group> shape_classes(std::span<const RankValues> ranks) {
  std::vector<Group> classes;
  std::unordered_map<uint64_t, std::vector<size_t>> by_hash;
  for (size_t i = 0; i < ranks.size(); ++i) {
    auto& candidates = by_hash[shape_hash(ranks[i].seq)];
    auto match = std::find_if(candidates.begin(), candidates.end(),
                              [&](size_t c) { return same_shape(ranks[classes[c].front()].seq, ranks[i].seq); });
    if (match != candidates.end()) {
      classes[*match].push_back(i);
    } else {
      candidates.push_back(classes.size());
      classes.push_back({i});
    }
  }
  return classes;
}

// The member whose last top-level loop runs longest (members share a shape).
size_t longest(std::span<const RankValues> ranks, const std::vector<size_t>& members) {
  size_t best = members.front(), last = last_top_loop(ranks[best].seq);
  if (last == kNoLoop) return best;
  for (size_t m : members)
    if (ranks[m].seq[last].count > ranks[best].seq[last].count) best = m;
  return best;
}

// seq with `minus` taken from every value, in the arena ("always 0" costs nothing).
trace::SeqRef store_shifted(trace::SeqArena& arena, std::span<const SeqItem> seq, int64_t minus) {
  if (seq.size() == 1 && !seq[0].is_loop() && seq[0].v == minus) return {};
  trace::SeqRef r = arena.add(seq);
  trace::seq_shift({arena.items().data() + r.off, r.len}, -minus);
  return r;
}

}  // namespace

std::span<const SeqItem> canonical_seq(const trace::Stream& s, const trace::Param& p) {
  if (p.seq.len == 0) return {&kZero, 1};
  return s.view(p.seq);
}

trace::SeqRef ParamMerger::rank_list(std::span<const RankValues> ranks, const std::vector<size_t>& members) {
  scratch_.clear();
  uint64_t h = members.size();
  for (size_t m : members) {
    scratch_.push_back(ranks[m].rank);
    h = mix(h, uint64_t(ranks[m].rank));
  }
  auto& stored = rank_lists_[h];
  for (trace::SeqRef r : stored) {
    // As many steps as ranks, like building the list.
    trace::SeqCursor c(out_.view(r));
    bool equal = trace::seq_length(out_.view(r)) == scratch_.size();
    for (size_t i = 0; equal && i < scratch_.size(); ++i) equal = c.next() == scratch_[i];
    if (equal) return r;
  }
  trace::SeqRef r = add_rank_list(out_.values, scratch_);
  stored.push_back(r);
  return r;
}

trace::Param ParamMerger::merge(std::span<const RankValues> ranks) {
  std::span<const SeqItem> first = ranks.front().seq;
  bool uniform = std::all_of(ranks.begin(), ranks.end(), [&](const RankValues& r) {
    return std::equal(r.seq.begin(), r.seq.end(), first.begin(), first.end());
  });
  if (uniform) return {store_shifted(out_.values, first, 0), -1};
  std::vector<Found> found;
  for (Group& c : shape_classes(ranks)) split_shape(ranks, std::move(c), found);
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.members < b.members; });
  std::vector<trace::RankVariant> variants;
  variants.reserve(found.size());
  for (const Found& f : found) {
    const RankValues& lead = ranks[longest(ranks, f.members)];
    trace::RankVariant v;
    v.ranks = rank_list(ranks, f.members);
    // Fits in 64 bits: group_by_scale checked every member's rank-0 values.
    v.seq = store_shifted(out_.values, lead.seq, f.scale * lead.rank);
    v.scale = f.scale;
    variants.push_back(v);
  }
  out_.ranked.push_back(std::move(variants));
  return {{}, int32_t(out_.ranked.size() - 1)};
}

trace::SeqRef add_rank_list(trace::SeqArena& arena, std::span<const int32_t> ranks) {
  trace::SeqBuilder b;
  for (int32_t r : ranks) b.append(r);
  return arena.add(b.items());
}

}  // namespace mpior::merge
