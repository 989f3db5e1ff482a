#include "merge/merge.hpp"

#include <algorithm>
#include <cstdint>
#include <unordered_map>

#include "merge/merge_params.hpp"
#include "merge/rank_runs.hpp"

namespace mpior::merge {

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  v *= 0xBF58476D1CE4E5B9ull;
  v ^= v >> 31;
  return (h ^ v) * 0x94D049BB133111EBull + 0x9E3779B97F4A7C15ull;
}

// Everything same_structure compares, to bucket streams before comparing.
uint64_t structure_hash(const trace::Stream& s) {
  uint64_t h = mix(mix(mix(s.thread, s.lossless), s.nodes.size()), s.leaves.size());
  for (const trace::Node& n : s.nodes) h = mix(h, (uint64_t(n.index) << 1) | n.loop);
  for (const trace::Leaf& l : s.leaves)
    h = mix(mix(h, (uint64_t(l.kind) << 16) | (uint64_t(l.depth) << 8) | l.flags), l.callsite);
  return h;
}

// The one rank a stream stands for, or -1 when it cannot take part in a merge.
int32_t single_rank(const trace::Stream& s) {
  if (!s.ranked.empty()) return -1;
  auto ranks = s.view(s.ranks);
  if (ranks.size() != 1 || ranks[0].is_loop()) return -1;
  return int32_t(ranks[0].v);
}

RankRuns ranks_of(const trace::Stream& s) { return RankRuns::of(s.view(s.ranks)); }

// A param's values for each rank of a stream that may stand for several
// (rank variants expanded: scaled ones shifted into a scratch arena).
class RankExpander {
 public:
  void add(const trace::Stream& s, const trace::Param& p, const RankRuns& ranks) {
    if (p.ranked < 0) {
      for (int64_t r : ranks.expand()) pending_.push_back({int32_t(r), &s, p.seq, false});
      return;
    }
    for (const trace::RankVariant& v : s.ranked[size_t(p.ranked)]) {
      for (int64_t r : trace::seq_expand(s.view(v.ranks))) {
        if (v.scale == 0) {
          pending_.push_back({int32_t(r), &s, v.seq, false});
          continue;
        }
        constexpr trace::SeqItem kZero{0, 0, 0};  // "always 0" stored: shifted, it is not
        trace::SeqRef ref = scratch_.add(v.seq.len ? s.view(v.seq) : std::span<const trace::SeqItem>(&kZero, 1));
        trace::seq_shift({scratch_.items().data() + ref.off, ref.len}, v.scale * r);
        pending_.push_back({int32_t(r), nullptr, ref, true});
      }
    }
  }
  // Every rank's values, ascending by rank; valid until the next clear().
  std::vector<RankValues>& values() {
    std::sort(pending_.begin(), pending_.end(), [](const Pending& a, const Pending& b) { return a.rank < b.rank; });
    values_.clear();
    for (const Pending& p : pending_) {
      trace::Param param{p.ref, -1};
      values_.push_back({p.rank, p.scratch ? scratch_.view(p.ref) : canonical_seq(*p.stream, param)});
    }
    return values_;
  }
  void clear() {
    pending_.clear();
    scratch_ = trace::SeqArena();
  }

 private:
  struct Pending {
    int32_t rank;
    const trace::Stream* stream;
    trace::SeqRef ref;
    bool scratch;
  };
  std::vector<Pending> pending_;
  trace::SeqArena scratch_;
  std::vector<RankValues> values_;
};

// A param over members that each stand for many ranks: their variants (in
// rank-0 form) join when their values and scale are equal, so the cost
// follows the variants and rank lists, not every rank's values.
class VariantUnion {
 public:
  void add(const trace::Stream& s, const trace::Param& p, const RankRuns& ranks) {
    if (p.ranked < 0) return join(canonical_seq(s, p), 0, ranks);
    for (const trace::RankVariant& v : s.ranked[size_t(p.ranked)])
      join(v.seq.len ? s.view(v.seq) : std::span<const trace::SeqItem>(&kZeroItem, 1), v.scale,
           RankRuns::of(s.view(v.ranks)));
  }
  trace::Param finish(trace::Stream& out) {
    if (joined_.size() == 1 && joined_[0].scale == 0) return {store(out, joined_[0].seq), -1};
    std::vector<trace::RankVariant> variants;
    for (Joined& j : joined_) variants.push_back({sorted_ranks(out, j.ranks), store(out, j.seq), j.scale});
    out.ranked.push_back(std::move(variants));
    return {{}, int32_t(out.ranked.size() - 1)};
  }
  void clear() {
    joined_.clear();
    by_hash_.clear();
  }

 private:
  static constexpr trace::SeqItem kZeroItem{0, 0, 0};
  struct Joined {
    std::span<const trace::SeqItem> seq;
    int64_t scale;
    RankRuns ranks;
  };
  // Members' lists ascend one after the other, so a variant's joined lists
  // ascend too; were they not, they are sorted as a plain list.
  static trace::SeqRef sorted_ranks(trace::Stream& out, const RankRuns& ranks) {
    if (ranks.ascending()) return ranks.store(out.values);
    std::vector<int64_t> all = ranks.expand();
    std::sort(all.begin(), all.end());
    std::vector<int32_t> r32(all.begin(), all.end());
    return add_rank_list(out.values, r32);
  }
  static trace::SeqRef store(trace::Stream& out, std::span<const trace::SeqItem> seq) {
    if (seq.size() == 1 && !seq[0].is_loop() && seq[0].v == 0) return {};  // "always 0" costs nothing
    return out.values.add(seq);
  }
  void join(std::span<const trace::SeqItem> seq, int64_t scale, const RankRuns& ranks) {
    uint64_t h = mix(uint64_t(scale), seq.size());
    for (const trace::SeqItem& it : seq) h = mix(mix(mix(h, uint64_t(it.v)), it.count), it.span);
    for (size_t j : by_hash_[h]) {
      if (joined_[j].scale != scale ||
          !std::equal(seq.begin(), seq.end(), joined_[j].seq.begin(), joined_[j].seq.end()))
        continue;
      joined_[j].ranks.append(ranks);
      return;
    }
    by_hash_[h].push_back(joined_.size());
    joined_.push_back({seq, scale, ranks});
  }
  std::vector<Joined> joined_;
  std::unordered_map<uint64_t, std::vector<size_t>> by_hash_;
};

// One merged stream from streams of equal structure, ranks ascending (each
// stream may stand for several ranks already, with rank variants).
class GroupMerger {
 public:
  GroupMerger(const std::vector<trace::Stream>& streams, const std::vector<size_t>& members,
              const std::vector<RankRuns>& ranks_of, size_t expand_ranks)
      : streams_(streams), members_(members), ranks_of_(ranks_of), params_(out_) {
    uint64_t total = 0;
    for (size_t m : members_) total += ranks_of_[m].size();
    expand_ = total <= expand_ranks;
  }

  trace::Stream merge() {
    const trace::Stream& first = streams_[members_.front()];
    out_.thread = first.thread;
    out_.lossless = first.lossless;
    RankRuns ranks;
    for (size_t m : members_) ranks.append(ranks_of_[m]);
    out_.ranks = ranks.store(out_.values);
    out_.nodes.reserve(first.nodes.size());
    for (size_t i = 0; i < first.nodes.size(); ++i) {
      const trace::Node& n = first.nodes[i];
      out_.nodes.push_back({n.loop, n.index, param([i](const trace::Stream& s) { return s.nodes[i].iters; })});
    }
    out_.leaves.reserve(first.leaves.size());
    for (size_t i = 0; i < first.leaves.size(); ++i) out_.leaves.push_back(leaf(i));
    return std::move(out_);
  }

 private:
  template <typename Get>
  trace::Param param(Get get) {
    if (!expand_) {
      union_.clear();
      for (size_t m : members_) union_.add(streams_[m], get(streams_[m]), ranks_of_[m]);
      return union_.finish(out_);
    }
    expander_.clear();
    for (size_t m : members_) {
      const trace::Stream& s = streams_[m];
      expander_.add(s, get(s), ranks_of_[m]);
    }
    return params_.merge(expander_.values());
  }

  trace::Leaf leaf(size_t i) {
    const trace::Leaf& first = streams_[members_.front()].leaves[i];
    trace::Leaf l;
    l.kind = first.kind;
    l.depth = first.depth;
    l.flags = first.flags;
    l.callsite = first.callsite;
    for (size_t a = 0; a < l.args.size(); ++a)
      l.args[a] = param([i, a](const trace::Stream& s) { return s.leaves[i].args[a]; });
    l.ret = param([i](const trace::Stream& s) { return s.leaves[i].ret; });
    l.err = param([i](const trace::Stream& s) { return s.leaves[i].err; });
    // Statistical timing: one distribution for the position over all ranks.
    // Lossless timing stays exact per rank, as rank variants.
    for (size_t m : members_) {
      l.gap.merge(streams_[m].leaves[i].gap);
      l.dur.merge(streams_[m].leaves[i].dur);
    }
    if (out_.lossless) {
      l.exact_gap = param([i](const trace::Stream& s) { return s.leaves[i].exact_gap; });
      l.exact_dur = param([i](const trace::Stream& s) { return s.leaves[i].exact_dur; });
    }
    return l;
  }

  const std::vector<trace::Stream>& streams_;
  const std::vector<size_t>& members_;
  const std::vector<RankRuns>& ranks_of_;
  trace::Stream out_;
  ParamMerger params_;
  RankExpander expander_;
  VariantUnion union_;
  bool expand_ = true;
};

// Groups streams of equal structure whose ranks ascend from one member to
// the next; `eligible` says which streams may join a group at all.
template <typename Eligible>
std::vector<trace::Stream> merge_groups(std::vector<trace::Stream> streams, Eligible eligible, size_t expand_ranks) {
  std::vector<RankRuns> ranks(streams.size());
  std::vector<std::vector<size_t>> groups;
  std::unordered_map<uint64_t, std::vector<size_t>> buckets;  // structure hash -> groups
  for (size_t i = 0; i < streams.size(); ++i) {
    if (eligible(streams[i])) ranks[i] = ranks_of(streams[i]);
    if (ranks[i].empty()) {
      groups.push_back({i});
      continue;
    }
    auto& bucket = buckets[structure_hash(streams[i])];
    bool joined = false;
    for (size_t g : bucket) {
      if (ranks[groups[g].back()].back() >= ranks[i].front() || !same_structure(streams[groups[g].front()], streams[i]))
        continue;
      groups[g].push_back(i);
      joined = true;
      break;
    }
    if (!joined) {
      bucket.push_back(groups.size());
      groups.push_back({i});
    }
  }
  std::vector<trace::Stream> out;
  out.reserve(groups.size());
  for (const auto& g : groups) {
    if (g.size() == 1)
      out.push_back(std::move(streams[g.front()]));
    else
      out.push_back(GroupMerger(streams, g, ranks, expand_ranks).merge());
  }
  return out;
}

}  // namespace

bool same_structure(const trace::Stream& a, const trace::Stream& b) {
  if (a.thread != b.thread || a.lossless != b.lossless || a.nodes.size() != b.nodes.size() ||
      a.leaves.size() != b.leaves.size())
    return false;
  for (size_t i = 0; i < a.nodes.size(); ++i)
    if (a.nodes[i].loop != b.nodes[i].loop || a.nodes[i].index != b.nodes[i].index) return false;
  for (size_t i = 0; i < a.leaves.size(); ++i) {
    const trace::Leaf &x = a.leaves[i], &y = b.leaves[i];
    if (x.kind != y.kind || x.depth != y.depth || x.flags != y.flags || x.callsite != y.callsite) return false;
  }
  return true;
}

std::vector<trace::Stream> merge_streams(std::vector<trace::Stream> streams) {
  return merge_groups(
      std::move(streams), [](const trace::Stream& s) { return single_rank(s) >= 0; }, SIZE_MAX);
}

std::vector<trace::Stream> merge_merged(std::vector<trace::Stream> streams, size_t expand_ranks) {
  return merge_groups(
      std::move(streams), [](const trace::Stream& s) { return !s.view(s.ranks).empty(); }, expand_ranks);
}

}  // namespace mpior::merge
