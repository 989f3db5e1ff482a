#include "trace/format_body.hpp"

#include <algorithm>
#include <bit>

namespace mpior::trace::body {
namespace {

// ---- streams ----------------------------------------------------------------

void put_ref(Encoder& e, SeqRef r) {
  e.uv(r.off);
  e.uv(r.len);
}

void put_param(Encoder& e, const Param& p) {
  put_ref(e, p.seq);
  e.sv(p.ranked);
}

void put_stats(Encoder& e, const TimeStats& t) {
  e.uv(t.count());
  e.sv(t.sum());
  e.sv(t.min());
  e.sv(t.max());
  e.f64(t.mean());
  e.f64(t.m2());
  e.uv(t.histogram().size());
  for (auto [bin, n] : t.histogram()) {
    e.u8(bin);
    e.uv(n);
  }
}

// The merged job's statistics (put_streams' compact form): the mean is the
// sum over the count unless told, the spread max - min, m2 only when not 0
// and in single precision (the spread it gives is printed to three digits,
// scaled by extrapolation: the histogram's bins are far coarser), the
// histogram, when shorter so, as the counts of the bins from min's to
// max's but the last (the count minus the others'), else (bin, count) pairs;
// the sum last, as its difference from what the histogram's bin middles
// (within min and max) add up to: a byte or two instead of four or five.
enum CompactBits : uint8_t { kMeanTold = 1, kRange = 2, kM2Zero = 4 };

int64_t hist_estimate(const std::vector<std::pair<uint8_t, uint64_t>>& hist, int64_t min, int64_t max) {
  uint64_t sum = 0;  // wrapping: a damaged file must not overflow a signed integer
  for (auto [bin, n] : hist) {
    uint64_t lo = uint64_t(std::max(TimeStats::bin_low(bin), min)),
             hi = uint64_t(std::min(TimeStats::bin_high(bin), max));
    sum += n * (lo + (hi - lo) / 2);
  }
  return int64_t(sum);
}

void put_stats_compact(Encoder& e, const TimeStats& t) {
  e.uv(t.count());
  if (t.count() == 0) return;
  e.sv(t.min());
  e.uv(uint64_t(t.max()) - uint64_t(t.min()));
  const auto& hist = t.histogram();
  const size_t first = TimeStats::bin_of(t.min()), last = TimeStats::bin_of(t.max());
  bool range =
      !hist.empty() && hist.front().first == first && hist.back().first == last && last - first < 1 + 2 * hist.size();
  uint8_t bits = uint8_t((t.mean() != double(t.sum()) / double(t.count()) ? kMeanTold : 0) | (range ? kRange : 0) |
                         (t.m2() == 0 ? kM2Zero : 0));
  e.u8(bits);
  if (bits & kMeanTold) e.f64(t.mean());
  if (!(bits & kM2Zero)) e.fixed32(std::bit_cast<uint32_t>(float(t.m2())));
  if (t.count() > 1 && range) {
    size_t i = 0;
    for (size_t b = first; b < last; ++b) e.uv(i < hist.size() && hist[i].first == b ? hist[i++].second : 0);
  } else if (t.count() > 1) {
    e.uv(hist.size());
    uint8_t prev = 0;
    for (auto [bin, n] : hist) {
      e.u8(uint8_t(bin - prev));
      e.uv(n);
      prev = bin;
    }
  }
  e.sv(int64_t(uint64_t(t.sum()) - uint64_t(hist_estimate(hist, t.min(), t.max()))));
}

void put_leaf(Encoder& e, const Leaf& l, bool lossless, bool compact) {
  e.uv(uint64_t(l.kind));
  e.u8(l.depth);
  e.u8(l.flags);
  e.uv(l.callsite);
  for (const Param& p : l.args) put_param(e, p);
  put_param(e, l.ret);
  put_param(e, l.err);
  (compact ? put_stats_compact : put_stats)(e, l.gap);
  (compact ? put_stats_compact : put_stats)(e, l.dur);
  if (lossless) {
    put_param(e, l.exact_gap);
    put_param(e, l.exact_dur);
  }
}

void put_stream(Encoder& e, const Stream& s, bool compact) {
  e.uv(s.thread);
  e.u8(s.lossless);
  put_ref(e, s.ranks);
  const auto& items = s.values.items();
  e.uv(items.size());
  for (const SeqItem& it : items) {
    e.sv(it.v);
    e.uv(it.count);
    e.uv(it.span);
  }
  e.uv(s.nodes.size());
  for (const Node& n : s.nodes) {
    e.u8(n.loop);
    e.uv(n.index);
    if (n.loop) put_param(e, n.iters);
  }
  e.uv(s.leaves.size());
  for (const Leaf& l : s.leaves) put_leaf(e, l, s.lossless, compact);
  e.uv(s.ranked.size());
  for (const auto& variants : s.ranked) {
    e.uv(variants.size());
    for (const RankVariant& v : variants) {
      put_ref(e, v.ranks);
      put_ref(e, v.seq);
      e.sv(v.scale);
    }
  }
}

SeqRef get_ref(Decoder& d, const SeqArena& arena) {
  SeqRef r;
  r.off = uint32_t(d.uv());
  r.len = uint32_t(d.uv());
  if (uint64_t(r.off) + r.len > arena.items().size()) d.fail("value sequence outside its stream");
  if (!seq_valid(arena.view(r))) d.fail("malformed value sequence");
  return r;
}

Param get_param(Decoder& d, const Stream& s) {
  Param p;
  p.seq = get_ref(d, s.values);
  int64_t ranked = d.sv();
  if (ranked < -1 || ranked > int64_t(INT32_MAX)) d.fail("bad rank-variant index");
  p.ranked = int32_t(ranked);
  return p;
}

TimeStats get_stats(Decoder& d) {
  uint64_t count = d.uv();
  int64_t sum = d.sv(), min = d.sv(), max = d.sv();
  double mean = d.f64(), m2 = d.f64();
  uint64_t n = d.count(2);
  std::vector<std::pair<uint8_t, uint64_t>> hist;
  hist.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    uint8_t bin = d.u8();
    hist.emplace_back(bin, d.uv());
  }
  TimeStats t;
  if (!TimeStats::restore(&t, count, sum, min, max, mean, m2, std::move(hist)))
    d.fail("inconsistent timing statistics");
  return t;
}

TimeStats get_stats_compact(Decoder& d) {
  TimeStats t;
  uint64_t count = d.uv();
  if (count == 0) return t;
  int64_t min = d.sv();
  int64_t max = int64_t(uint64_t(min) + d.uv());
  uint8_t bits = d.u8();
  if (bits > (kMeanTold | kRange | kM2Zero)) d.fail("timing statistics flags " + std::to_string(bits));
  if (max < min) d.fail("timing statistics whose maximum is below their minimum");
  double mean = bits & kMeanTold ? d.f64() : 0.0;
  double m2 = bits & kM2Zero ? 0.0 : double(std::bit_cast<float>(d.fixed32()));
  std::vector<std::pair<uint8_t, uint64_t>> hist;
  if (count > 1 && (bits & kRange)) {
    unsigned first = TimeStats::bin_of(min), last = TimeStats::bin_of(max);
    uint64_t rest = count;
    for (unsigned b = first; b < last; ++b)
      if (uint64_t n = d.uv()) {
        if (n >= rest) d.fail("histogram bins hold more than the count");
        hist.emplace_back(uint8_t(b), n);
        rest -= n;
      }
    hist.emplace_back(uint8_t(last), rest);
  } else if (count > 1) {
    uint64_t n = d.count(2);
    unsigned bin = 0;
    for (uint64_t i = 0; i < n; ++i) {
      bin += d.u8();
      if (bin > 255 || (i > 0 && bin == hist.back().first)) d.fail("histogram bins out of order");
      hist.emplace_back(uint8_t(bin), d.uv());
    }
  }
  int64_t sum = int64_t(uint64_t(hist_estimate(hist, min, max)) + uint64_t(d.sv()));
  if (!(bits & kMeanTold)) mean = double(sum) / double(count);
  if (!TimeStats::restore(&t, count, sum, min, max, mean, m2, std::move(hist)))
    d.fail("inconsistent timing statistics");
  return t;
}

Leaf get_leaf(Decoder& d, const Stream& s, bool compact) {
  Leaf l;
  uint64_t kind = d.uv();
  if (kind >= kNumKinds) d.fail("unknown event kind " + std::to_string(kind));
  l.kind = Kind(kind);
  l.depth = d.u8();
  l.flags = d.u8();
  l.callsite = d.uv();
  for (Param& p : l.args) p = get_param(d, s);
  l.ret = get_param(d, s);
  l.err = get_param(d, s);
  l.gap = compact ? get_stats_compact(d) : get_stats(d);
  l.dur = compact ? get_stats_compact(d) : get_stats(d);
  if (s.lossless) {
    l.exact_gap = get_param(d, s);
    l.exact_dur = get_param(d, s);
  }
  return l;
}

void check_stream(Decoder& d, const Stream& s) {
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const Node& n = s.nodes[i];
    if (n.loop ? i + 1 + uint64_t(n.index) > s.nodes.size() : n.index >= s.leaves.size())
      d.fail("event tree node " + std::to_string(i) + " points outside the tree");
  }
  auto check = [&](const Param& p) {
    if (p.ranked >= 0 && size_t(p.ranked) >= s.ranked.size()) d.fail("rank-variant index outside the stream");
  };
  for (const Leaf& l : s.leaves) {
    for (const Param& p : l.args) check(p);
    check(l.ret);
    check(l.err);
  }
  for (const Node& n : s.nodes) check(n.iters);
}

Stream get_stream(Decoder& d, bool compact) {
  Stream s;
  s.thread = uint32_t(d.uv());
  s.lossless = d.u8() != 0;
  SeqRef ranks{uint32_t(d.uv()), uint32_t(d.uv())};
  auto& items = s.values.items();
  uint64_t n = d.count(3);
  items.resize(n);
  for (SeqItem& it : items) {
    it.v = d.sv();
    it.count = uint32_t(d.uv());
    it.span = uint32_t(d.uv());
  }
  if (uint64_t(ranks.off) + ranks.len > n || ranks.len == 0) d.fail("stream without a rank list");
  if (!seq_valid(s.values.view(ranks))) d.fail("a stream's rank list is malformed");
  s.ranks = ranks;
  n = d.count(2);
  s.nodes.resize(n);
  for (Node& node : s.nodes) {
    node.loop = d.u8() != 0;
    node.index = uint32_t(d.uv());
    if (node.loop) node.iters = get_param(d, s);
  }
  n = d.count(20);
  s.leaves.reserve(n);
  for (uint64_t i = 0; i < n; ++i) s.leaves.push_back(get_leaf(d, s, compact));
  n = d.count(1);
  s.ranked.resize(n);
  for (auto& variants : s.ranked) {
    uint64_t m = d.count(5);
    variants.resize(m);
    for (RankVariant& v : variants) {
      v.ranks = get_ref(d, s.values);
      v.seq = get_ref(d, s.values);
      v.scale = d.sv();
    }
  }
  check_stream(d, s);
  return s;
}

}  // namespace

void put_streams(Encoder& e, const std::vector<Stream>& streams, bool compact) {
  e.uv(streams.size());
  for (const Stream& s : streams) put_stream(e, s, compact);
}

std::vector<Stream> get_streams(Decoder& d, bool compact) {
  uint64_t n = d.count(8);
  std::vector<Stream> out;
  out.reserve(n);
  for (uint64_t i = 0; i < n; ++i) out.push_back(get_stream(d, compact));
  return out;
}

void check_stream_ranks(Decoder& d, const std::vector<Stream>& streams, size_t ranks) {
  for (const Stream& s : streams)
    if (uint64_t n = seq_length(s.view(s.ranks)); n > ranks)
      d.fail("a stream stands for " + std::to_string(n) + " ranks, the file holds " + std::to_string(ranks));
}

// ---- tables and headers -----------------------------------------------------

void put_tallies(Encoder& e, const KindTallies& t) {
  uint64_t used = 0;
  for (const auto& k : t) used += k.calls != 0;
  e.uv(used);
  for (size_t i = 0; i < t.size(); ++i) {
    if (!t[i].calls) continue;
    e.str(name(Kind(i)));  // by name: kind numbers may change between versions
    e.uv(t[i].calls);
    e.sv(t[i].time_ns);
  }
}

KindTallies get_tallies(Decoder& d) {
  KindTallies t{};
  uint64_t n = d.count(3);
  for (uint64_t i = 0; i < n; ++i) {
    std::string kname = d.str();
    auto k = kind_from_name(kname);
    if (!k) d.fail("unknown event kind '" + kname + "'");
    t[size_t(*k)].calls = d.uv();
    t[size_t(*k)].time_ns = d.sv();
  }
  return t;
}

void put_ranks(Encoder& e, const std::vector<int32_t>& v) {
  e.uv(v.size());
  for (int32_t r : v) e.sv(r);
}

std::vector<int32_t> get_ranks(Decoder& d) {
  std::vector<int32_t> v(d.count(1));
  for (int32_t& r : v) r = int32_t(d.sv());
  return v;
}

void put_file(Encoder& e, const FileEntry& f) {
  e.str(f.path);
  e.sv(f.flags);
}

FileEntry get_file(Decoder& d) {
  FileEntry f;
  f.path = d.str();
  f.flags = d.sv();
  return f;
}

void put_comm(Encoder& e, const CommEntry& c) {
  e.sv(c.id);
  e.u8(uint8_t(c.origin));
  e.sv(c.parent);
  e.uv(c.parent_seq);
  e.sv(c.color);
  e.sv(c.key);
  put_ranks(e, c.members);
}

CommEntry get_comm(Decoder& d) {
  CommEntry c;
  c.id = int32_t(d.sv());
  uint8_t origin = d.u8();
  if (origin > uint8_t(CommOrigin::graph)) d.fail("unknown communicator origin");
  c.origin = CommOrigin(origin);
  c.parent = int32_t(d.sv());
  c.parent_seq = d.uv();
  c.color = d.sv();
  c.key = d.sv();
  c.members = get_ranks(d);
  return c;
}

void put_files(Encoder& e, const std::vector<FileEntry>& files) {
  e.uv(files.size());
  for (const FileEntry& f : files) put_file(e, f);
}

void put_tables(Encoder& e, const std::vector<FileEntry>& files, const std::vector<CommEntry>& comms) {
  put_files(e, files);
  e.uv(comms.size());
  for (const CommEntry& c : comms) put_comm(e, c);
}

void get_tables(Decoder& d, std::vector<FileEntry>* files, std::vector<CommEntry>* comms) {
  files->resize(d.count(2));
  for (FileEntry& f : *files) f = get_file(d);
  comms->resize(d.count(7));
  for (CommEntry& c : *comms) c = get_comm(d);
}

void put_placement(Encoder& e, const CpuPlacement& p) {
  e.sv(p.allowed);
  e.sv(p.online);
}

CpuPlacement get_placement(Decoder& d) {
  CpuPlacement p;
  int64_t allowed = d.sv(), online = d.sv();
  if (allowed < 0 || online < 0 || allowed > INT32_MAX || online > INT32_MAX) d.fail("CPU placement out of range");
  p.allowed = int32_t(allowed);
  p.online = int32_t(online);
  return p;
}

namespace {

void put_process(Encoder& e, const ProcessInfo& p) {
  e.fixed64(p.job_id);
  e.sv(p.rank);
  e.sv(p.size);
  e.u8(uint8_t(p.mpi | (p.pruning << 1)));
  e.u8(p.finished);
  e.sv(p.pid);
  e.str(p.host);
  e.str(p.exe);
  e.str(p.cmdline);
  e.str(p.cwd);
  e.sv(p.clock_mono_ns);
  e.sv(p.clock_real_ns);
  e.sv(p.end_ns);
  e.sv(p.clock_offset_ns);
  e.sv(p.cpu_wait_ns);
  put_placement(e, p.placement);
}

ProcessInfo get_process(Decoder& d) {
  ProcessInfo p;
  p.job_id = d.fixed64();
  p.rank = int32_t(d.sv());
  p.size = int32_t(d.sv());
  uint8_t bits = d.u8();
  p.mpi = bits & 1;
  p.pruning = (bits >> 1) & 1;
  p.finished = d.u8() != 0;
  p.pid = d.sv();
  p.host = d.str();
  p.exe = d.str();
  p.cmdline = d.str();
  p.cwd = d.str();
  p.clock_mono_ns = d.sv();
  p.clock_real_ns = d.sv();
  p.end_ns = d.sv();
  p.clock_offset_ns = d.sv();
  p.cpu_wait_ns = d.sv();
  if (p.cpu_wait_ns < 0) d.fail("negative wait for a CPU");
  p.placement = get_placement(d);
  if (p.size < 1 || p.rank < 0 || p.rank >= p.size)
    d.fail("rank " + std::to_string(p.rank) + " of " + std::to_string(p.size));
  return p;
}

}  // namespace

void put_rank_head(Encoder& e, const RankTrace& t) {
  put_process(e, t.process);
  put_files(e, t.files);
}

void put(Encoder& e, const RankTrace& t) {
  put_rank_head(e, t);
  e.uv(t.comms.size());
  for (const CommEntry& c : t.comms) put_comm(e, c);
  put_rank_tail(e, t);
}

void put_rank_tail(Encoder& e, const RankTrace& t) {
  put_streams(e, t.streams);
  put_tallies(e, t.pruned);
  put_tallies(e, t.excluded);
  e.uv(t.spill_segments);
  put_tallies(e, t.unrecorded);
}

RankTrace get_rank_trace(Decoder& d) {
  RankTrace t;
  t.process = get_process(d);
  get_tables(d, &t.files, &t.comms);
  t.streams = get_streams(d);
  t.pruned = get_tallies(d);
  t.excluded = get_tallies(d);
  t.spill_segments = d.uv();
  t.unrecorded = get_tallies(d);
  return t;
}

void put(Encoder& e, const JobInfo& j) {
  e.fixed64(j.job_id);
  e.sv(j.size);
  e.u8(uint8_t(j.state));
  e.str(j.cmdline);
  e.str(j.cwd);
  e.str(j.host);
  e.sv(j.start_real_ns);
  put_ranks(e, j.ranks_written);
}

JobInfo get_job(Decoder& d) {
  JobInfo j;
  j.job_id = d.fixed64();
  j.size = int32_t(d.sv());
  uint8_t state = d.u8();
  if (state > uint8_t(JobState::complete)) d.fail("unknown job state");
  j.state = JobState(state);
  j.cmdline = d.str();
  j.cwd = d.str();
  j.host = d.str();
  j.start_real_ns = d.sv();
  j.ranks_written = get_ranks(d);
  if (j.size < 1) d.fail("job of " + std::to_string(j.size) + " ranks");
  return j;
}

void put_layout(Encoder& e, const std::vector<TraceFileRanks>& files) {
  e.uv(files.size());
  for (const TraceFileRanks& f : files) {
    e.str(f.name);
    put_ranks(e, f.ranks);
  }
}

std::vector<TraceFileRanks> get_layout(Decoder& d, int32_t size) {
  std::vector<TraceFileRanks> files(d.count(2));
  for (TraceFileRanks& f : files) {
    f.name = d.str();
    if (f.name.empty() || f.name.find('/') != std::string::npos) d.fail("bad trace file name in the job layout");
    f.ranks = get_ranks(d);
    for (int32_t r : f.ranks)
      if (r < 0 || r >= size) d.fail(f.name + ": rank " + std::to_string(r) + " outside the job");
  }
  return files;
}

void put(Encoder& e, const SpillSegment& s) {
  e.sv(s.rank);
  e.uv(s.seq);
  put_stream(e, s.stream, false);
}

SpillSegment get_spill_segment(Decoder& d) {
  SpillSegment s;
  s.rank = int32_t(d.sv());
  s.seq = d.uv();
  s.stream = get_stream(d, false);
  return s;
}

}  // namespace mpior::trace::body
