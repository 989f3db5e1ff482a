// The encoding of the model's documents (format_body.hpp): the records'
// descriptions are in format_fields.hpp; here are the compact statistics'
// conversions, the checks of streams read whole and the documents' entries.
#include <algorithm>
#include <bit>

#include "trace/format_fields.hpp"

namespace mpior::trace::body {
namespace {

using Hist = std::vector<std::pair<uint8_t, uint64_t>>;

int64_t hist_estimate(const Hist& hist, int64_t min, int64_t max) {
  uint64_t sum = 0;  // wrapping: a damaged file must not overflow a signed integer
  for (auto [bin, n] : hist) {
    uint64_t lo = uint64_t(std::max(TimeStats::bin_low(bin), min)),
             hi = uint64_t(std::min(TimeStats::bin_high(bin), max));
    sum += n * (lo + (hi - lo) / 2);
  }
  return int64_t(sum);
}

// A run of the bins from min's to max's, the last bin the count's rest.
Hist hist_of_run(const CompactStats& c, Decoder& d) {
  Hist hist;
  unsigned first = TimeStats::bin_of(c.min), last = TimeStats::bin_of(c.max());
  uint64_t rest = c.count;
  for (unsigned b = first; b < last; ++b)
    if (uint64_t n = c.run[b - first]) {
      if (n >= rest) d.fail("histogram bins hold more than the count");
      hist.emplace_back(uint8_t(b), n);
      rest -= n;
    }
  hist.emplace_back(uint8_t(last), rest);
  return hist;
}

Hist hist_of_steps(const CompactStats& c, Decoder& d) {
  Hist hist;
  unsigned bin = 0;
  for (auto [step, n] : c.steps) {
    bin += step;
    if (bin > 255 || (!hist.empty() && bin == hist.back().first)) d.fail("histogram bins out of order");
    hist.emplace_back(uint8_t(bin), n);
  }
  return hist;
}

}  // namespace

CompactStats compact_of(const TimeStats& t) {
  CompactStats c;
  c.count = t.count();
  if (c.count == 0) return c;
  c.min = t.min();
  c.spread = uint64_t(t.max()) - uint64_t(t.min());
  const Hist& hist = t.histogram();
  const size_t first = TimeStats::bin_of(t.min()), last = TimeStats::bin_of(t.max());
  bool range =
      !hist.empty() && hist.front().first == first && hist.back().first == last && last - first < 1 + 2 * hist.size();
  c.bits = uint8_t((t.mean() != double(t.sum()) / double(t.count()) ? c.kMeanTold : 0) | (range ? c.kRange : 0) |
                   (t.m2() == 0 ? c.kM2Zero : 0));
  c.mean = t.mean();
  c.m2 = std::bit_cast<uint32_t>(float(t.m2()));
  if (c.has_run()) {
    size_t i = 0;
    for (size_t b = first; b < last; ++b) c.run.push_back(i < hist.size() && hist[i].first == b ? hist[i++].second : 0);
  } else if (c.count > 1) {
    uint8_t prev = 0;
    for (auto [bin, n] : hist) {
      c.steps.emplace_back(uint8_t(bin - prev), n);
      prev = bin;
    }
  }
  c.sum_off = int64_t(uint64_t(t.sum()) - uint64_t(hist_estimate(hist, t.min(), t.max())));
  return c;
}

TimeStats stats_of(const CompactStats& c, Decoder& d) {
  TimeStats t;
  if (c.count == 0) return t;
  Hist hist = c.has_run() ? hist_of_run(c, d) : c.count > 1 ? hist_of_steps(c, d) : Hist{};
  int64_t sum = int64_t(uint64_t(hist_estimate(hist, c.min, c.max())) + uint64_t(c.sum_off));
  double mean = c.bits & c.kMeanTold ? c.mean : double(sum) / double(c.count);
  double m2 = c.bits & c.kM2Zero ? 0.0 : double(std::bit_cast<float>(c.m2));
  if (!TimeStats::restore(&t, c.count, sum, c.min, c.max(), mean, m2, std::move(hist)))
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

void check_stream_ranks(Decoder& d, const std::vector<Stream>& streams, size_t ranks) {
  for (const Stream& s : streams)
    if (uint64_t n = seq_length(s.view(s.ranks)); n > ranks)
      d.fail("a stream stands for " + std::to_string(n) + " ranks, the file holds " + std::to_string(ranks));
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
JobInfo get_job_file(Decoder& d, uint32_t version) {
  Get io(d, version);
  JobInfo j;
  job_file(io, j);
  return j;
}

void put(Encoder& e, const SpillSegment& s) { put_fields(e, s); }
SpillSegment get_spill_segment(Decoder& d) { return get_fields<SpillSegment>(d); }

}  // namespace mpior::trace::body
