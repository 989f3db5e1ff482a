#include "postproc/romio_lustre.hpp"

#include <algorithm>

namespace mpior::postproc {

namespace {

// The requested bytes in one stripe.
struct InStripe {
  int64_t stripe = 0;
  std::vector<ByteRange> runs;
};

// The requested bytes cut at stripe boundaries, stripes in file order (ROMIO
// splits each request where a stripe ends, ADIOI_LUSTRE_Calc_my_req).
std::vector<InStripe> by_stripe(const std::vector<ByteRange>& requested, int64_t unit) {
  std::vector<InStripe> out;
  for (auto [from, to] : requested)
    while (from < to) {
      int64_t stripe = from / unit, end = std::min(to, (stripe + 1) * unit);
      if (out.empty() || out.back().stripe != stripe) out.push_back({stripe, {}});
      out.back().runs.emplace_back(from, end);
      from = end;
    }
  return out;
}

// One aggregator's step: it writes from its first byte in the stripe up to
// the stripe's end or `last_end` (one past its last byte in the call).
void write_step(const InStripe& s, int64_t unit, int64_t last_end, const LustreHints& h, int64_t file_end,
                std::vector<PosixTransfer>& out) {
  int64_t off = s.runs.front().first, stop = std::min((s.stripe + 1) * unit, last_end), covered = 0;
  for (auto [from, to] : s.runs) covered += to - from;
  if (covered < stop - off && !h.ds_in_coll) {
    for (auto [from, to] : s.runs) out.push_back({from, to, false, to - from});
    return;
  }
  if (covered < stop - off) add_read(out, off, stop, file_end);
  out.push_back({off, stop, false, stop - off});
}

}  // namespace

int lustre_aggregator_count(int cb_nodes, const LustreHints& h) {
  int factor = h.striping_factor;
  if (cb_nodes >= factor) return factor * std::min(cb_nodes / factor, h.co_ratio);
  // ROMIO's search: the first cofactor not above cb_nodes, else the last
  // small divisor that is.
  int count = 1;
  for (int64_t divisor = 2; factor >= divisor * divisor; ++divisor) {
    if (factor % divisor != 0) continue;
    if (factor / divisor <= cb_nodes) return int(factor / divisor);
    if (divisor <= cb_nodes) count = int(divisor);
  }
  return count;
}

bool lustre_docollect(int64_t bytes, int64_t pieces, int64_t coll_threshold) {
  int64_t average = pieces > 0 ? bytes / pieces : 0;
  return coll_threshold <= 0 || average <= coll_threshold;
}

int lustre_aggregator_of(int64_t offset, int64_t striping_unit, int count) {
  return int((offset / striping_unit) % count);
}

std::vector<std::vector<PosixTransfer>> lustre_writes(const std::vector<ByteRange>& requested, int count,
                                                      const LustreHints& h, int64_t file_end) {
  std::vector<std::vector<PosixTransfer>> out(static_cast<size_t>(count));
  std::vector<InStripe> stripes = by_stripe(requested, h.striping_unit);
  std::vector<int64_t> last_end(static_cast<size_t>(count), 0);
  auto owner = [&](const InStripe& s) {
    return size_t(lustre_aggregator_of(s.runs.front().first, h.striping_unit, count));
  };
  for (const InStripe& s : stripes) last_end[owner(s)] = s.runs.back().second;
  for (const InStripe& s : stripes) {
    size_t j = owner(s);
    write_step(s, h.striping_unit, last_end[j], h, file_end, out[j]);
  }
  return out;
}

}  // namespace mpior::postproc
