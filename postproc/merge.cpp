#include "merge.hpp"

#include <unordered_map>

#include "merge_params.hpp"

namespace mpior::postproc {

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

// One merged stream from streams of equal structure, ranks ascending.
class GroupMerger {
 public:
  GroupMerger(const std::vector<trace::Stream>& streams, const std::vector<size_t>& members,
              const std::vector<int32_t>& rank_of)
      : streams_(streams), members_(members), rank_of_(rank_of), params_(out_) {}

  trace::Stream merge() {
    const trace::Stream& first = streams_[members_.front()];
    out_.thread = first.thread;
    out_.lossless = first.lossless;
    std::vector<int32_t> ranks;
    for (size_t m : members_) ranks.push_back(rank_of_[m]);
    out_.ranks = add_rank_list(out_.values, ranks);
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
    values_.clear();
    for (size_t m : members_) {
      const trace::Stream& s = streams_[m];
      values_.push_back({rank_of_[m], canonical_seq(s, get(s))});
    }
    return params_.merge(values_);
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
  const std::vector<int32_t>& rank_of_;
  trace::Stream out_;
  ParamMerger params_;
  std::vector<RankValues> values_;
};

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
  std::vector<int32_t> rank_of(streams.size());
  std::vector<std::vector<size_t>> groups;
  std::unordered_map<uint64_t, std::vector<size_t>> buckets;  // structure hash -> groups
  for (size_t i = 0; i < streams.size(); ++i) {
    rank_of[i] = single_rank(streams[i]);
    if (rank_of[i] < 0) {
      groups.push_back({i});
      continue;
    }
    auto& bucket = buckets[structure_hash(streams[i])];
    bool joined = false;
    for (size_t g : bucket) {
      if (rank_of[groups[g].back()] >= rank_of[i] || !same_structure(streams[groups[g].front()], streams[i])) continue;
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
      out.push_back(GroupMerger(streams, g, rank_of).merge());
  }
  return out;
}

}  // namespace mpior::postproc
