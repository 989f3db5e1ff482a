#include "extrap/blocksize.hpp"

#include <algorithm>
#include <cmath>

#include "merge/merge_params.hpp"
#include "trace/arg_views.hpp"
#include "trace/cursor.hpp"

namespace mpior::extrap {

namespace {

bool is_posix_transfer(trace::Kind k) {
  trace::OpClass op = trace::info(k).op;
  return trace::info(k).family == trace::Family::posix && (op == trace::OpClass::read || op == trace::OpClass::write);
}

bool is_collective_transfer(const trace::Stream& s, const trace::Leaf& l) {
  trace::OpClass op = trace::info(l.kind).op;
  if (!trace::is_mpiio(l.kind) || (op != trace::OpClass::mpiio_read && op != trace::OpClass::mpiio_write)) return false;
  // The access bits are the same at every occurrence of a position (the call
  // site decides _all or not); read them from the first rank.
  trace::EventCursor c(s, int32_t(s.rank_list().front()));
  trace::Event ev;
  while (c.next(ev))
    if (ev.kind == l.kind && ev.callsite == l.callsite) return mpiio_args(ev).flags() & trace::fio::kColl;
  return false;
}

// One rank's occurrences of a leaf, split: the values of every slot, and how
// many requests each occurrence became.
struct SplitValues {
  std::array<std::vector<int64_t>, trace::kNumArgs + 2> slots;  // args, ret, err
  std::vector<int64_t> pieces;
};

SplitValues split_rank(const trace::Stream& s, uint32_t leaf, int32_t rank, int64_t cb) {
  SplitValues out;
  trace::EventCursor c(s, rank);
  trace::Event ev;
  while (c.next(ev)) {
    if (ev.leaf != leaf) continue;
    int64_t count = io_args(ev).count();
    int64_t n = count > cb ? (count + cb - 1) / cb : 1;
    out.pieces.push_back(n);
    for (int64_t p = 0; p < n; ++p) {
      int64_t size = n == 1 ? count : std::min(cb, count - p * cb);
      for (int a = 0; a < trace::kNumArgs; ++a) {
        int64_t v = ev.args[size_t(a)];
        if (n > 1 && a == trace::arg::count) v = size;
        if (n > 1 && a == trace::arg::offset && v >= 0) v += p * cb;
        out.slots[size_t(a)].push_back(v);
      }
      out.slots[trace::kNumArgs].push_back(n > 1 && ev.ret == count ? size : ev.ret);
      out.slots[trace::kNumArgs + 1].push_back(ev.err);
    }
  }
  return out;
}

std::vector<trace::SeqItem> fold(const std::vector<int64_t>& values) {
  // A constant is one scalar: the cursor repeats the last value.
  if (!values.empty() && std::all_of(values.begin(), values.end(), [&](int64_t v) { return v == values[0]; }))
    return {trace::SeqItem{values[0], 0, 0}};
  trace::SeqBuilder b;
  for (int64_t v : values) b.append(v);
  if (b.items().empty()) return {trace::SeqItem{0, 0, 0}};
  return b.items();
}

// One Param over every rank of s from per-rank value lists.
trace::Param merged(trace::Stream& s, const std::vector<int64_t>& ranks,
                    std::vector<std::vector<trace::SeqItem>> seqs) {
  std::vector<merge::RankValues> per_rank;
  for (size_t i = 0; i < ranks.size(); ++i) per_rank.push_back({int32_t(ranks[i]), seqs[i]});
  merge::ParamMerger m(s);
  return m.merge(per_rank);
}

trace::TimeStats divided(const trace::TimeStats& t, double pieces) {
  if (t.count() == 0 || pieces <= 1) return t;
  uint64_t count = uint64_t(std::llround(double(t.count()) * pieces));
  double mean = t.mean() / pieces;
  int64_t rounded = std::llround(mean);
  std::vector<std::pair<uint8_t, uint64_t>> hist;
  if (count > 1) hist.emplace_back(trace::TimeStats::bin_of(rounded), count);
  trace::TimeStats out;
  trace::TimeStats::restore(&out, count, std::llround(mean * double(count)), std::min(rounded, t.min()),
                            std::max(rounded, t.max()), mean, 0, std::move(hist));
  return out;
}

}  // namespace

std::vector<uint32_t> collective_requests(const trace::Stream& s) {
  std::vector<uint32_t> out;
  std::vector<int32_t> parent_at_depth;  // the last leaf seen at each depth
  for (uint32_t i = 0; i < s.leaves.size(); ++i) {
    const trace::Leaf& l = s.leaves[i];
    parent_at_depth.resize(size_t(l.depth) + 1, -1);
    parent_at_depth[l.depth] = int32_t(i);
    if (l.depth == 0 || !is_posix_transfer(l.kind)) continue;
    int32_t parent = parent_at_depth[size_t(l.depth) - 1];
    if (parent >= 0 && is_collective_transfer(s, s.leaves[size_t(parent)])) out.push_back(i);
  }
  return out;
}

uint64_t split_requests(trace::Stream& s, uint32_t leaf, int64_t cb) {
  // Walking every rank (8,192 of an extrapolated plan) to find no request to split.
  if (trace::param_max(s, io_args(s.leaves[leaf]).count()) <= cb) return 1;
  std::vector<int64_t> ranks = s.rank_list();
  std::vector<SplitValues> per_rank;
  uint64_t most = 1;
  double occurrences = 0, requests = 0;
  for (int64_t r : ranks) {
    per_rank.push_back(split_rank(s, leaf, int32_t(r), cb));
    for (int64_t n : per_rank.back().pieces) {
      most = std::max<uint64_t>(most, uint64_t(n));
      occurrences += 1;
      requests += double(n);
    }
  }
  if (most == 1) return 1;
  trace::Leaf& l = s.leaves[leaf];
  auto slot = [&](size_t k) {
    std::vector<std::vector<trace::SeqItem>> seqs;
    for (const SplitValues& v : per_rank) seqs.push_back(fold(v.slots[k]));
    return merged(s, ranks, std::move(seqs));
  };
  for (size_t a = 0; a < size_t(trace::kNumArgs); ++a) l.args[a] = slot(a);
  l.ret = slot(trace::kNumArgs);
  l.err = slot(trace::kNumArgs + 1);
  double per = occurrences > 0 ? requests / occurrences : 1;
  l.gap = divided(l.gap, per);
  l.dur = divided(l.dur, per);
  std::vector<std::vector<trace::SeqItem>> iters;
  for (const SplitValues& v : per_rank) iters.push_back(fold(v.pieces));
  trace::Param loop_iters = merged(s, ranks, std::move(iters));
  // The loop node goes right before the leaf's node; loops around it grow by one.
  size_t at = 0;
  while (at < s.nodes.size() && (s.nodes[at].loop || s.nodes[at].index != leaf)) ++at;
  for (size_t q = 0; q < at; ++q)
    if (s.nodes[q].loop && q + s.nodes[q].index >= at) ++s.nodes[q].index;
  s.nodes.insert(s.nodes.begin() + ptrdiff_t(at), trace::Node{true, 1, loop_iters});
  return most;
}

}  // namespace mpior::extrap
