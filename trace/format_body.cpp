// The encoding of the model's documents (format_body.hpp): the records'
// descriptions are in format_fields.hpp; here are what they share with the
// merged job's own encoding (format_merged.cpp) and the documents' entries.
#include <algorithm>
#include <bit>

#include "trace/format_fields.hpp"

namespace mpior::trace::body {
namespace {

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

}  // namespace

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

void put_streams(Encoder& e, const std::vector<Stream>& v, bool compact) {
  Put io(e, kFormatVersion);
  streams(io, const_cast<std::vector<Stream>&>(v), compact);
}
std::vector<Stream> get_streams(Decoder& d, bool compact) {
  Get io(d, kFormatVersion);
  std::vector<Stream> v;
  streams(io, v, compact);
  return v;
}

void check_stream_ranks(Decoder& d, const std::vector<Stream>& streams, size_t ranks) {
  for (const Stream& s : streams)
    if (uint64_t n = seq_length(s.view(s.ranks)); n > ranks)
      d.fail("a stream stands for " + std::to_string(n) + " ranks, the file holds " + std::to_string(ranks));
}

void put_tallies(Encoder& e, const KindTallies& t) {
  Put io(e, kFormatVersion);
  tallies(io, const_cast<KindTallies&>(t));
}
KindTallies get_tallies(Decoder& d) {
  Get io(d, kFormatVersion);
  KindTallies t{};
  tallies(io, t);
  return t;
}

void put_placement(Encoder& e, const CpuPlacement& p) { put_fields(e, p); }
CpuPlacement get_placement(Decoder& d) { return get_fields<CpuPlacement>(d); }
void put_file(Encoder& e, const FileEntry& f) { put_fields(e, f); }
FileEntry get_file(Decoder& d) { return get_fields<FileEntry>(d); }
void put_comm(Encoder& e, const CommEntry& c) { put_fields(e, c); }
CommEntry get_comm(Decoder& d) { return get_fields<CommEntry>(d); }

void put(Encoder& e, const RankTrace& t) { put_fields(e, t); }
RankTrace get_rank_trace(Decoder& d) { return get_fields<RankTrace>(d); }
void put_rank_head(Encoder& e, const RankTrace& t) {
  Put io(e, kFormatVersion);
  head(io, const_cast<RankTrace&>(t));
}
void put_rank_tail(Encoder& e, const RankTrace& t) {
  Put io(e, kFormatVersion);
  tail(io, const_cast<RankTrace&>(t));
}

void put_job_file(Encoder& e, const JobInfo& j) {
  Put io(e, kFormatVersion);
  job_file(io, const_cast<JobInfo&>(j));
}
JobInfo get_job_file(Decoder& d) {
  Get io(d, kFormatVersion);
  JobInfo j;
  job_file(io, j);
  return j;
}

void put(Encoder& e, const SpillSegment& s) { put_fields(e, s); }
SpillSegment get_spill_segment(Decoder& d) { return get_fields<SpillSegment>(d); }

}  // namespace mpior::trace::body
