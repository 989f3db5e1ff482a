#include "postproc/ompio_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "trace/tool_error.hpp"

namespace mpior::postproc {

namespace {

// fbtl posix's data sieving thresholds and buffer (mca_fbtl_posix_max_*).
constexpr int64_t kSieveMaxBlock = 1 << 20, kSieveMaxGap = 4096, kSieveMaxSpan = 64 << 20;
// io_ompio_max_aggregators_ratio, io_ompio_aggregators_cutoff_threshold.
constexpr int kMaxAggregatorsRatio = 8;
constexpr double kCutoffThreshold = 3 / 100.0;
// io_ompio_cycle_buffer_size: an independent call's bytes a cycle.
constexpr int64_t kCycleBufferSize = 512 << 20;
// fbtl_posix_max_aio_active_reqs: the requests of an asynchronous call in
// flight at once (sysconf(_SC_AIO_MAX) where it says, not on Linux).
constexpr size_t kAioActiveRequests = 2048;

// OMPIO's cost of the exchange with P_a aggregators (cost_calc: LogGP
// parameters of DDR InfiniBand, Jha and Gabriel 2017), as its code computes
// it, integer divisions included.
double exchange_cost(int P, int P_a, int64_t d_p, int64_t b_c, bool one_dim) {
  double n_as = 1.0, m_s = 1.0, n_ar = 1.0;
  const double L = .00000184, o = .00000149, G = .00000000067;
  double g = .0000119;
  long file_domain = long(P) * d_p / P_a;
  double n_r = double(file_domain) / double(b_c);
  if (one_dim) {
    if (d_p > b_c) {
      m_s = double(b_c);
    } else {
      n_ar = double(b_c) / double(d_p);
      m_s = double(d_p);
    }
  } else {
    int P_x = int(std::sqrt(P)), P_y = P_x;
    n_as = double(P_a) / double(P_x);
    n_ar = double(P_y);
    if (d_p > int64_t(P_a) * b_c / P)
      m_s = std::fmin(double(b_c) / double(P_y), double(d_p));
    else
      m_s = std::fmin(double(d_p * P_x) / double(P_a), double(d_p));
  }
  double n_s = double(d_p) / (n_as * m_s);
  if (m_s < 33554432) g = .00000108;
  double t_send = n_s * (L + 2 * o + (n_as - 1) * g + (m_s - 1) * n_as * G);
  double t_recv = n_r * (L + 2 * o + (n_ar - 1) * g + (m_s - 1) * n_ar * G);
  return t_send + t_recv;
}

constexpr std::pair<OmpioFcoll, const char*> kFcollNames[] = {{OmpioFcoll::automatic, "automatic"},
                                                              {OmpioFcoll::individual, "individual"},
                                                              {OmpioFcoll::vulcan, "vulcan"},
                                                              {OmpioFcoll::dynamic, "dynamic"},
                                                              {OmpioFcoll::dynamic_gen2, "dynamic_gen2"},
                                                              {OmpioFcoll::two_phase, "two_phase"}};

// A file piece with the rank that asks for it.
struct Owned {
  int64_t begin, end;
  int32_t rank;
};

// Pieces in offset order cut in cycles of `per_cycle` bytes (a piece split
// across two), each cycle's bytes with adjacent ones joined.
std::vector<std::vector<ByteRange>> cycles_of(std::vector<Owned> pieces, int64_t per_cycle) {
  std::stable_sort(pieces.begin(), pieces.end(), [](const Owned& a, const Owned& b) { return a.begin < b.begin; });
  std::vector<std::vector<ByteRange>> out;
  int64_t left = 0;
  for (const Owned& p : pieces)
    for (int64_t at = p.begin; at < p.end;) {
      if (left == 0) out.emplace_back(), left = per_cycle;
      int64_t n = std::min(left, p.end - at);
      std::vector<ByteRange>& cycle = out.back();
      if (!cycle.empty() && cycle.back().second == at)
        cycle.back().second += n;
      else
        cycle.emplace_back(at, at + n);
      at += n, left -= n;
    }
  return out;
}

// A cycle's entries in one fbtl call a stripe, an entry cut where its
// stripe ends (dynamic_gen2's split_iov_array).
std::vector<std::vector<ByteRange>> by_stripe(const std::vector<ByteRange>& entries, int64_t stripe_size) {
  std::vector<std::vector<ByteRange>> out;
  int64_t stripe = -1;
  for (auto [at, end] : entries)
    while (at < end) {
      int64_t cut = std::min(end, (at / stripe_size + 1) * stripe_size);
      if (at / stripe_size != stripe) out.emplace_back(), stripe = at / stripe_size;
      out.back().emplace_back(at, cut);
      at = cut;
    }
  return out;
}

void posix_read(std::vector<PosixTransfer>& out, int64_t begin, int64_t end, int64_t file_end) {
  out.push_back({begin, end, true, std::clamp<int64_t>(file_end - begin, 0, end - begin)});
}

// Each group's aggregator moves its group's bytes in offset order,
// `per_cycle` a cycle, a cycle one fbtl call (sieved when reading).
std::vector<std::vector<PosixTransfer>> by_groups(const std::vector<std::vector<ByteRange>>& pieces, int count,
                                                  int64_t per_cycle, bool read, int64_t file_end) {
  std::vector<std::vector<int32_t>> groups = ompio_groups(int(pieces.size()), count);
  std::vector<std::vector<PosixTransfer>> out(groups.size());
  for (size_t j = 0; j < groups.size(); ++j) {
    std::vector<Owned> mine;
    for (int32_t r : groups[j])
      for (auto [begin, end] : pieces[size_t(r)]) mine.push_back({begin, end, r});
    for (const std::vector<ByteRange>& cycle : cycles_of(std::move(mine), std::max<int64_t>(per_cycle, 1)))
      for (const PosixTransfer& t : ompio_fbtl(cycle, read, read, file_end)) {
        if (!t.read) file_end = std::max(file_end, t.end);
        out[j].push_back(t);
      }
  }
  return out;
}

}  // namespace

OmpioFcoll parse_ompio_fcoll(std::string_view name) {
  for (auto [f, text] : kFcollNames)
    if (name == text) return f;
  throw ToolError(fmt::format(
      "fcoll '{}': the components modelled are individual, vulcan, dynamic, dynamic_gen2 and two_phase", name));
}

const char* ompio_fcoll_name(OmpioFcoll f) {
  for (auto [g, text] : kFcollNames)
    if (f == g) return text;
  return "automatic";
}

OmpioFcoll ompio_fcoll_of(int ranks, OmpioFcoll asked) {
  if (asked != OmpioFcoll::automatic) return asked;
  return ranks <= 2 ? OmpioFcoll::individual : OmpioFcoll::vulcan;
}

std::vector<int32_t> ompio_spread_aggregators(int ranks, int count) {
  count = std::clamp(count, 1, std::max(ranks, 1));
  std::vector<int32_t> out;
  for (int i = 0; i < count; ++i) out.push_back(int32_t(int64_t(i) * ranks / count));
  return out;
}

std::vector<std::vector<PosixTransfer>> ompio_gen2_writes(const std::vector<std::vector<ByteRange>>& pieces, int count,
                                                          int64_t bytes_per_agg, int64_t stripe_size,
                                                          int64_t file_end) {
  count = std::clamp(count, 1, std::max(int(pieces.size()), 1));
  stripe_size = std::max<int64_t>(stripe_size, 1);
  std::vector<std::vector<Owned>> dealt(static_cast<size_t>(count));
  for (size_t r = 0; r < pieces.size(); ++r)  // mca_fcoll_dynamic_gen2_break_file_view
    for (auto [at, end] : pieces[r])
      while (at < end) {
        int64_t cut = std::min(end, (at / stripe_size + 1) * stripe_size);
        dealt[size_t(at / stripe_size % count)].push_back({at, cut, int32_t(r)});
        at = cut;
      }
  std::vector<std::vector<PosixTransfer>> out(static_cast<size_t>(count));
  for (size_t j = 0; j < dealt.size(); ++j)
    for (const std::vector<ByteRange>& cycle : cycles_of(std::move(dealt[j]), std::max<int64_t>(bytes_per_agg / 2, 1)))
      for (const std::vector<ByteRange>& call : by_stripe(cycle, stripe_size))
        for (const PosixTransfer& t : ompio_fbtl(call, false, true, file_end)) {
          if (!t.read) file_end = std::max(file_end, t.end);
          out[j].push_back(t);
        }
  return out;
}

int ompio_default_aggregator_count(int ranks, int64_t chunk, int64_t view_size, int64_t bytes_per_agg) {
  if (ranks < 1 || chunk <= 0 || bytes_per_agg <= 0) return 1;
  bool one_dim = chunk == view_size;
  int incr = ranks < 16 ? 2 : ranks < 128 ? 4 : ranks < 4096 ? 16 : 32;
  double prev = exchange_cost(ranks, 1, chunk, bytes_per_agg, one_dim), dprev = 0;
  int chosen = 1;
  for (int P_a = incr; P_a <= ranks; P_a += incr) {
    double t = exchange_cost(ranks, P_a, chunk, bytes_per_agg, one_dim);
    double dabs = prev - t, d = dabs / prev, ddiff = P_a == incr ? d : dprev - d;
    if (ddiff < kCutoffThreshold || dabs < 0.001) break;
    prev = t, dprev = d, chosen = P_a;
  }
  return std::max(1, std::min(chosen, ranks / kMaxAggregatorsRatio));
}

int ompio_aggregator_count(int ranks, int64_t chunk, int64_t view_size, const OmpioHints& h) {
  if (h.num_aggregators > 0) return std::min(h.num_aggregators, ranks);
  return ompio_default_aggregator_count(ranks, chunk, view_size, h.bytes_per_agg);
}

std::vector<std::vector<int32_t>> ompio_groups(int ranks, int count) {
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(std::max(count, 1)));
  int size = ranks / int(out.size()), rest = ranks % int(out.size()), r = 0;
  for (int g = 0; g < int(out.size()); ++g)
    for (int k = 0; k < size + (g < rest); ++k) out[size_t(g)].push_back(r++);
  return out;
}

std::vector<PosixTransfer> ompio_fbtl(const std::vector<ByteRange>& entries, bool read, bool sieve, int64_t file_end) {
  std::vector<PosixTransfer> out;
  int64_t n = int64_t(entries.size()), bytes = 0;
  for (const ByteRange& e : entries) bytes += e.second - e.first;
  int64_t gap = n > 0 ? (entries.back().first - entries.front().first) / n : 0;
  if (n > 1 && sieve && gap > 0 && bytes / n <= kSieveMaxBlock && gap <= kSieveMaxGap) {
    for (size_t s = 0; s < entries.size();) {
      size_t e = s + 1;  // the first entry always; more while the span fits the buffer
      while (e < entries.size() && entries[e].second - entries[s].first <= kSieveMaxSpan) ++e;
      int64_t begin = entries[s].first, end = entries[e - 1].second;
      posix_read(out, begin, end, file_end);
      if (!read) out.push_back({begin, end, false, end - begin});
      s = e;
    }
    return out;
  }
  for (const ByteRange& e : entries)
    if (read)
      posix_read(out, e.first, e.second, file_end);
    else
      out.push_back({e.first, e.second, false, e.second - e.first});
  for (PosixTransfer& t : out) t.vectored = n > 1;  // several entries: one preadv or pwritev each
  return out;
}

std::vector<PosixTransfer> ompio_aio(const std::vector<ByteRange>& entries, bool read) {
  std::vector<PosixTransfer> out;
  for (size_t i = 0; i < entries.size(); ++i) {
    auto [begin, end] = entries[i];
    bool batch_ends = (i + 1) % kAioActiveRequests == 0 || i + 1 == entries.size();
    out.push_back({begin, end, read, end - begin, false, true, batch_ends});
  }
  return out;
}

std::vector<PosixTransfer> ompio_individual(const std::vector<ByteRange>& pieces, bool read, int64_t file_end) {
  std::vector<Owned> mine;
  for (auto [begin, end] : pieces) mine.push_back({begin, end, 0});
  std::vector<PosixTransfer> out;
  for (const std::vector<ByteRange>& cycle : cycles_of(std::move(mine), kCycleBufferSize)) {
    std::vector<PosixTransfer> made = ompio_fbtl(cycle, read, read, file_end);
    out.insert(out.end(), made.begin(), made.end());
  }
  return out;
}

std::vector<std::vector<PosixTransfer>> ompio_writes(const std::vector<std::vector<ByteRange>>& pieces, int count,
                                                     int64_t bytes_per_agg, int64_t file_end) {
  count = std::max(count, 1);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const auto& mine : pieces) {  // a rank with nothing to write counts as [0, 0) (vulcan's minmax)
    lo = std::min(lo, mine.empty() ? 0 : mine.front().first);
    hi = std::max(hi, mine.empty() ? 0 : mine.back().second);
  }
  std::vector<std::vector<Owned>> dealt(static_cast<size_t>(count));
  int64_t domain = hi > lo ? (hi - lo + count - 1) / count : 0;
  for (size_t r = 0; domain > 0 && r < pieces.size(); ++r)
    for (auto [at, end] : pieces[r])
      while (at < end) {
        int64_t cut = std::min(end, (at / domain + 1) * domain);
        dealt[size_t(at / domain % count)].push_back({at, cut, int32_t(r)});
        at = cut;
      }
  std::vector<std::vector<std::vector<ByteRange>>> cycles(static_cast<size_t>(count));
  size_t most = 0;
  for (size_t j = 0; j < cycles.size(); ++j)
    most = std::max(most, (cycles[j] = cycles_of(std::move(dealt[j]), std::max<int64_t>(bytes_per_agg / 2, 1))).size());
  bool async = most > 2;  // vulcan's automatic choice: ipwritev beyond two cycles
  std::vector<std::vector<PosixTransfer>> out(static_cast<size_t>(count));
  for (size_t j = 0; j < cycles.size(); ++j)
    for (const std::vector<ByteRange>& cycle : cycles[j]) {
      std::vector<PosixTransfer> made = async ? ompio_aio(cycle, false) : ompio_fbtl(cycle, false, true, file_end);
      for (const PosixTransfer& t : made)
        if (!t.read) file_end = std::max(file_end, t.end);
      out[j].insert(out[j].end(), made.begin(), made.end());
    }
  return out;
}

std::vector<std::vector<PosixTransfer>> ompio_reads(const std::vector<std::vector<ByteRange>>& pieces, int count,
                                                    int64_t bytes_per_agg, int64_t file_end) {
  return by_groups(pieces, count, bytes_per_agg, true, file_end);
}

std::vector<std::vector<PosixTransfer>> ompio_dynamic_writes(const std::vector<std::vector<ByteRange>>& pieces,
                                                             int count, int64_t bytes_per_agg, int64_t file_end) {
  return by_groups(pieces, count, bytes_per_agg, false, file_end);
}

std::vector<std::vector<PosixTransfer>> ompio_two_phase(const std::vector<std::vector<ByteRange>>& pieces, int count,
                                                        int64_t bytes_per_agg, bool read, int64_t file_end) {
  std::vector<ByteRange> requested;  // every rank's pieces, sorted, adjacent ones joined
  for (const std::vector<ByteRange>& mine : pieces) requested.insert(requested.end(), mine.begin(), mine.end());
  std::sort(requested.begin(), requested.end());
  size_t kept = 0;
  for (const ByteRange& p : requested)
    if (kept > 0 && p.first <= requested[kept - 1].second)
      requested[kept - 1].second = std::max(requested[kept - 1].second, p.second);
    else
      requested[kept++] = p;
  requested.resize(kept);
  std::vector<std::vector<PosixTransfer>> out(static_cast<size_t>(std::max(count, 1)));
  if (requested.empty()) return out;
  std::vector<ByteRange> domains = file_domains(requested.front().first, requested.back().second, int(out.size()), 0);
  for (size_t j = 0; j < out.size(); ++j)
    window_transfers(requested, domains[j], std::max<int64_t>(bytes_per_agg, 1), read, file_end, false, out[j]);
  return out;
}

OmpioDealt ompio_collective(const std::vector<std::vector<ByteRange>>& pieces, bool read, OmpioFcoll fcoll, int count,
                            int64_t bytes_per_agg, int64_t striping_unit, int striping_factor, int64_t file_end) {
  int n = int(pieces.size());
  OmpioDealt out;
  if (fcoll == OmpioFcoll::two_phase) {
    out.movers = ompio_spread_aggregators(n, count);
    out.transfers = ompio_two_phase(pieces, count, bytes_per_agg, read, file_end);
  } else if (fcoll == OmpioFcoll::dynamic_gen2 && !read) {  // on Lustre the file's stripes and their count
    if (striping_factor > 1) count = std::min(striping_factor, n);
    out.movers = ompio_spread_aggregators(n, count);
    int64_t stripe = striping_unit > 0 ? striping_unit : kOmpioGen2StripeSize;
    out.transfers = ompio_gen2_writes(pieces, count, bytes_per_agg, stripe, file_end);
  } else {
    for (const std::vector<int32_t>& group : ompio_groups(n, count)) out.movers.push_back(group.front());
    if (read)
      out.transfers = ompio_reads(pieces, count, bytes_per_agg, file_end);
    else if (fcoll == OmpioFcoll::dynamic)
      out.transfers = ompio_dynamic_writes(pieces, count, bytes_per_agg, file_end);
    else
      out.transfers = ompio_writes(pieces, count, bytes_per_agg, file_end);
  }
  return out;
}

}  // namespace mpior::postproc
