#include "merge/merge_job.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <span>
#include <unordered_map>

#include "merge/merge.hpp"
#include "merge/merge_params.hpp"
#include "trace/codec.hpp"
#include "trace/value_seq.hpp"

namespace mpior::merge {
namespace {

std::string key_of(const trace::FileEntry& f) { return f.path + '\0' + std::to_string(f.flags); }

std::string key_of(const trace::CommEntry& c) {
  std::string k = std::to_string(c.id) + ',' + std::to_string(int(c.origin)) + ',' + std::to_string(c.parent) + ',' +
                  std::to_string(c.parent_seq) + ',' + std::to_string(c.color) + ',' + std::to_string(c.key) + ':';
  for (int32_t m : c.members) k += std::to_string(m) + ',';
  return k;
}

// The job's tables being built: each distinct entry once.
class Tables {
 public:
  explicit Tables(trace::MergedJob& out) : out_(out) {
    for (size_t i = 0; i < out.files.size(); ++i) files_.emplace(key_of(out.files[i]), int32_t(i));
    for (size_t i = 0; i < out.comms.size(); ++i) comms_.emplace(key_of(out.comms[i]), int32_t(i));
  }
  int32_t file(trace::FileEntry&& f) { return add(files_, out_.files, std::move(f)); }
  int32_t comm(trace::CommEntry&& c) { return add(comms_, out_.comms, std::move(c)); }

 private:
  template <typename T>
  static int32_t add(std::unordered_map<std::string, int32_t>& index, std::vector<T>& table, T&& e) {
    auto [it, fresh] = index.emplace(key_of(e), int32_t(table.size()));
    if (fresh) table.push_back(std::move(e));
    return it->second;
  }
  trace::MergedJob& out_;
  std::unordered_map<std::string, int32_t> files_, comms_;
};

// Rank k of n's part of a merged position's statistics when the ranks'
// occurrences are not known: the parts add up to the whole again (each bin,
// the count and the sum).
trace::TimeStats share(const trace::TimeStats& t, size_t k, size_t n) {
  if (n <= 1 || t.count() == 0) return t;
  auto part = [&](int64_t x) {
    return int64_t(__int128(x) * int64_t(k + 1) / int64_t(n) - __int128(x) * int64_t(k) / int64_t(n));
  };
  std::vector<std::pair<uint8_t, uint64_t>> hist;
  uint64_t count = 0;
  for (const auto& [bin, c] : t.histogram()) {
    uint64_t p = uint64_t(part(int64_t(c)));
    if (p) hist.emplace_back(bin, p);
    count += p;
  }
  if (t.histogram().empty()) count = uint64_t(part(int64_t(t.count())));
  if (count <= 1) hist.clear();
  trace::TimeStats out;
  if (count == 0) return out;
  double m2 = t.m2() * double(count) / double(t.count());
  if (!trace::TimeStats::restore(&out, count, part(t.sum()), t.min(), t.max(), t.mean(), m2, std::move(hist))) return t;
  return out;
}

uint64_t add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t mul_sat(uint64_t a, uint64_t b) { return b && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

// How often a loop's body runs over `visits` visits of the loop: the sum of
// the iteration counts read (the cursor's reading: one a visit, the last one
// repeating past the end, none below 1 runs the body).
uint64_t body_runs(const trace::Stream& s, const trace::Param& iters, uint64_t visits) {
  std::span<const trace::SeqItem> seq = s.view(iters.seq);
  if (seq.empty() || visits == 0) return 0;
  if (seq.size() == 1) return mul_sat(uint64_t(std::max<int64_t>(0, seq[0].v)), visits);
  trace::SeqCursor c(seq);
  uint64_t total = 0, n = std::min(visits, trace::seq_length(seq));
  int64_t last = 0;
  for (uint64_t k = 0; k < n; ++k) total = add_sat(total, uint64_t(std::max<int64_t>(0, last = c.next())));
  return add_sat(total, mul_sat(uint64_t(std::max<int64_t>(0, last)), visits - n));
}

// Occurrences of each leaf of a one-rank stream (rank variants resolved),
// from its loops' iteration counts alone: a node runs once per run of the
// body it is in.
std::vector<uint64_t> leaf_counts(const trace::Stream& s) {
  std::vector<uint64_t> out(s.leaves.size(), 0);
  struct Open {
    size_t end;
    uint64_t runs;
  };
  std::vector<Open> open;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    while (!open.empty() && i >= open.back().end) open.pop_back();
    uint64_t visits = open.empty() ? 1 : open.back().runs;
    const trace::Node& n = s.nodes[i];
    if (n.loop)
      open.push_back({i + 1 + n.index, body_runs(s, n.iters, visits)});
    else if (n.index < out.size())
      out[n.index] = add_sat(out[n.index], visits);
  }
  return out;
}

// A merged position's statistics split among its ranks, rank k taking its
// own counts[k] occurrences: counts, sums and every histogram bin add up to
// the merged ones again, and every part keeps the merged mean, so a rank's
// events read back as the merged plan's do (the mean at every occurrence)
// and the ranks' times sum to the merged time. Each bin is dealt out in
// proportion to what the ranks still take, so the last one fills every rank
// exactly. Counts that do not add up (a damaged file): the proportional share.
std::vector<trace::TimeStats> split(const trace::TimeStats& t, const std::vector<uint64_t>& counts) {
  std::vector<trace::TimeStats> out(counts.size());
  uint64_t total = 0;
  for (uint64_t c : counts) total = add_sat(total, c);
  if (total != t.count() || t.count() == 0) {
    for (size_t k = 0; k < counts.size(); ++k) out[k] = share(t, k, counts.size());
    return out;
  }
  std::vector<std::pair<uint8_t, uint64_t>> bins = t.histogram();
  if (bins.empty()) bins.emplace_back(trace::TimeStats::bin_of(t.min()), t.count());
  std::vector<uint64_t> rem = counts;
  std::vector<std::vector<std::pair<uint8_t, uint64_t>>> hist(counts.size());
  uint64_t left = t.count();
  for (const auto& [bin, h] : bins) {
    unsigned __int128 acc = 0;
    uint64_t before = 0;
    for (size_t k = 0; k < rem.size(); ++k) {
      acc += rem[k];
      uint64_t upto = uint64_t(acc * h / left), p = upto - before;
      before = upto;
      if (p == 0) continue;
      hist[k].emplace_back(bin, p);
      rem[k] -= p;
    }
    left -= h;
  }
  int64_t sum_before = 0;
  unsigned __int128 running = 0;
  uint8_t lo_bin = trace::TimeStats::bin_of(t.min()), hi_bin = trace::TimeStats::bin_of(t.max());
  for (size_t k = 0; k < counts.size(); ++k) {
    uint64_t c = counts[k];
    running += c;
    int64_t upto = int64_t(__int128(t.sum()) * __int128(running) / __int128(t.count()));
    int64_t sum = upto - sum_before;
    sum_before = upto;
    if (c == 0) continue;
    int64_t lo = t.min(), hi = t.max();
    if (c == 1) {  // its one value is its bin's: the bin is all a merge keeps of it
      uint8_t b = hist[k].front().first;
      lo = hi = b == hi_bin   ? t.max()
                : b == lo_bin ? t.min()
                              : std::clamp(trace::TimeStats::bin_low(b), t.min(), t.max());
      hist[k].clear();
    }
    double m2 = t.m2() * double(c) / double(t.count());
    if (!trace::TimeStats::restore(&out[k], c, sum, lo, hi, t.mean(), m2, std::move(hist[k])))
      out[k] = share(t, k, counts.size());
  }
  return out;
}

// The statistical timing of a merged stream's positions split among the
// ranks' own streams (own[k] is rank k of the stream's list).
void split_timing(const trace::Stream& s, std::vector<trace::Stream>& own) {
  std::vector<std::vector<uint64_t>> counts;
  for (const trace::Stream& o : own) counts.push_back(leaf_counts(o));
  std::vector<uint64_t> c(own.size());
  for (size_t i = 0; i < s.leaves.size(); ++i) {
    for (size_t k = 0; k < own.size(); ++k) c[k] = counts[k][i];
    std::vector<trace::TimeStats> gap = split(s.leaves[i].gap, c), dur = split(s.leaves[i].dur, c);
    for (size_t k = 0; k < own.size(); ++k) {
      own[k].leaves[i].gap = std::move(gap[k]);
      own[k].leaves[i].dur = std::move(dur[k]);
    }
  }
}

// One rank's own stream out of a merged one.
class Unmerger {
 public:
  Unmerger(const trace::Stream& s, int32_t rank, const std::string& name) : s_(s), rank_(rank), name_(name) {}

  // The rank's stream, timing statistics still the merged ones (split_timing).
  trace::Stream stream() {
    o_.thread = s_.thread;
    o_.lossless = s_.lossless;
    o_.ranks = add_rank_list(o_.values, std::span<const int32_t>(&rank_, 1));
    o_.nodes.reserve(s_.nodes.size());
    for (const trace::Node& node : s_.nodes) o_.nodes.push_back({node.loop, node.index, param(node.iters)});
    o_.leaves.reserve(s_.leaves.size());
    for (const trace::Leaf& l : s_.leaves) {
      trace::Leaf x = l;
      for (size_t a = 0; a < x.args.size(); ++a) x.args[a] = param(l.args[a]);
      x.ret = param(l.ret);
      x.err = param(l.err);
      x.exact_gap = param(l.exact_gap);
      x.exact_dur = param(l.exact_dur);
      o_.leaves.push_back(std::move(x));
    }
    return std::move(o_);
  }

 private:
  trace::Param param(const trace::Param& p) {
    if (p.ranked < 0) return {copy(p.seq), -1};
    if (size_t(p.ranked) >= s_.ranked.size()) throw trace::FormatError(name_ + ": a rank variant index out of range");
    for (const trace::RankVariant& v : s_.ranked[size_t(p.ranked)]) {
      if (!trace::seq_contains(s_.view(v.ranks), rank_)) continue;
      if (v.scale == 0) return {copy(v.seq), -1};
      constexpr trace::SeqItem kZero{0, 0, 0};  // "always 0" shifted is not 0
      trace::SeqRef ref = o_.values.add(v.seq.len ? s_.view(v.seq) : std::span<const trace::SeqItem>(&kZero, 1));
      trace::seq_shift({o_.values.items().data() + ref.off, ref.len}, v.scale * rank_);
      return {ref, -1};
    }
    throw trace::FormatError(name_ + ": rank " + std::to_string(rank_) + " of a merged stream of thread " +
                             std::to_string(s_.thread) + " has no values (no rank variant holds it)");
  }
  trace::SeqRef copy(trace::SeqRef r) { return r.len ? o_.values.add(s_.view(r)) : trace::SeqRef{}; }

  const trace::Stream& s_;
  int32_t rank_;
  const std::string& name_;
  trace::Stream o_;
};

// Every position's mean made its sum over its count (the exact mean, where
// the running mean may differ in its last bits), so merged.mpior need not
// store it, and m2 in single precision, as merged.mpior stores it
// (CompactStats, trace/format_fields.hpp).
void exact_means(std::vector<trace::Stream>& streams) {
  auto exact = [](trace::TimeStats& t) {
    if (t.count() == 0) return;
    trace::TimeStats::restore(&t, t.count(), t.sum(), t.min(), t.max(), double(t.sum()) / double(t.count()),
                              t.count() > 1 ? double(float(t.m2())) : 0.0, t.histogram());
  };
  for (trace::Stream& s : streams)
    for (trace::Leaf& l : s.leaves) {
      exact(l.gap);
      exact(l.dur);
    }
}

}  // namespace

trace::MergedJob job_of_rank(trace::RankTrace t) {
  trace::MergedJob m;
  m.job_id = t.process.job_id;
  m.size = t.process.size;
  Tables tables(m);
  trace::MergedRank r;
  r.process = std::move(t.process);
  for (trace::FileEntry& f : t.files) r.files.push_back(tables.file(std::move(f)));
  for (trace::CommEntry& c : t.comms) r.comms.push_back(tables.comm(std::move(c)));
  r.pruned = t.pruned;
  r.excluded = t.excluded;
  r.unrecorded = t.unrecorded;
  m.ranks.push_back(std::move(r));
  m.streams = std::move(t.streams);
  exact_means(m.streams);
  return m;
}

trace::MergedJob merge_jobs(std::vector<trace::MergedJob> parts, size_t expand_ranks) {
  if (parts.empty()) return {};
  trace::MergedJob out;
  out.job_id = parts.front().job_id;
  out.size = parts.front().size;
  Tables tables(out);
  std::vector<trace::Stream> streams;
  for (trace::MergedJob& p : parts) {
    std::vector<int32_t> files, comms;
    for (trace::FileEntry& f : p.files) files.push_back(tables.file(std::move(f)));
    for (trace::CommEntry& c : p.comms) comms.push_back(tables.comm(std::move(c)));
    for (trace::MergedRank& r : p.ranks) {
      for (int32_t& i : r.files) i = files[size_t(i)];
      for (int32_t& i : r.comms) i = comms[size_t(i)];
      out.ranks.push_back(std::move(r));
    }
    std::move(p.streams.begin(), p.streams.end(), std::back_inserter(streams));
  }
  out.streams = merge_merged(std::move(streams), expand_ranks);
  exact_means(out.streams);
  return out;
}

std::vector<trace::RankTrace> rank_traces(const trace::MergedJob& m, const std::string& name) {
  std::vector<trace::RankTrace> out(m.ranks.size());
  std::vector<int32_t> order;  // m.ranks' rank numbers, ascending
  for (size_t i = 0; i < m.ranks.size(); ++i) {
    const trace::MergedRank& r = m.ranks[i];
    trace::RankTrace& t = out[i];
    t.process = r.process;
    for (int32_t f : r.files) t.files.push_back(m.files[size_t(f)]);
    for (int32_t c : r.comms) t.comms.push_back(m.comms[size_t(c)]);
    t.pruned = r.pruned;
    t.excluded = r.excluded;
    t.unrecorded = r.unrecorded;
    order.push_back(r.process.rank);
  }
  for (const trace::Stream& s : m.streams) {
    std::vector<int64_t> ranks = s.rank_list();
    std::vector<trace::Stream> own;
    std::vector<size_t> at;
    own.reserve(ranks.size());
    for (int64_t r : ranks) {
      auto it = std::lower_bound(order.begin(), order.end(), r);
      if (it == order.end() || *it != r)
        throw trace::FormatError(name + ": a merged stream stands for rank " + std::to_string(r) +
                                 ", which the file does not hold");
      own.push_back(Unmerger(s, *it, name).stream());
      at.push_back(size_t(it - order.begin()));
    }
    if (own.size() > 1) split_timing(s, own);
    for (size_t k = 0; k < own.size(); ++k) out[at[k]].streams.push_back(std::move(own[k]));
  }
  for (trace::RankTrace& t : out)
    std::stable_sort(t.streams.begin(), t.streams.end(),
                     [](const trace::Stream& a, const trace::Stream& b) { return a.thread < b.thread; });
  return out;
}

}  // namespace mpior::merge
