#include "extrap/seq_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace mpior::extrap {

using trace::SeqItem;

namespace {

constexpr size_t kShownSamples = 12;

std::string seq_text(const SeqSample& s) {
  std::vector<int64_t> v = trace::seq_expand(s.items);
  std::string out;
  for (size_t i = 0; i < v.size() && i < 6; ++i) out += fmt::format("{}{}", i ? "," : "", v[i] + s.offset);
  if (v.size() > 6) out += fmt::format(",... ({} values)", v.size());
  return out;
}

}  // namespace

bool same_shape(std::span<const SeqItem> a, std::span<const SeqItem> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].is_loop() != b[i].is_loop() || a[i].span != b[i].span) return false;
  return true;
}

bool one_shape(const std::vector<SeqSample>& samples) {
  return std::all_of(samples.begin(), samples.end(),
                     [&](const SeqSample& s) { return same_shape(samples.front().items, s.items); });
}

std::vector<SeqSample> as_loops(const std::vector<SeqSample>& samples, std::vector<std::vector<SeqItem>>& store) {
  std::vector<SeqSample> out = samples;
  for (SeqSample& s : out) {
    std::span<const SeqItem> v = s.items;
    bool scalars = v.size() >= 2 && std::none_of(v.begin(), v.end(), [](const SeqItem& i) { return i.is_loop(); });
    for (size_t i = 2; scalars && i < v.size(); ++i) scalars = v[i].v - v[i - 1].v == v[1].v - v[0].v;
    if (!scalars || v.size() > UINT32_MAX) continue;
    store.push_back({SeqItem{v[1].v - v[0].v, uint32_t(v.size()), 1}, SeqItem{v[0].v, 0, 0}});
    s.items = store.back();
  }
  return one_shape(out) ? out : std::vector<SeqSample>{};
}

std::vector<SeqSample> as_flat(const std::vector<SeqSample>& samples, std::vector<std::vector<SeqItem>>& store) {
  std::vector<SeqSample> out = samples;
  for (SeqSample& s : out) {
    std::vector<int64_t> v = trace::seq_expand(s.items);
    if (v.empty() || v.size() > kMaxFlatValues || (&s != &out.front() && v.size() != out.front().items.size()))
      return {};
    std::vector<SeqItem>& flat = store.emplace_back();
    for (int64_t x : v) flat.push_back(SeqItem{x, 0, 0});
    s.items = flat;
  }
  return out;
}

std::string samples_text(const std::vector<SeqSample>& samples) {
  std::string out;
  for (size_t i = 0; i < samples.size() && i < kShownSamples; ++i)
    out += fmt::format("\n    n={} rank {}: {}", samples[i].n, samples[i].r, seq_text(samples[i]));
  if (samples.size() > kShownSamples) out += fmt::format("\n    ... {} more", samples.size() - kShownSamples);
  return out;
}

std::string samples_line(const std::vector<SeqSample>& samples) {
  std::string out;
  for (size_t i = 0; i < samples.size() && i < kShownSamples; ++i)
    out += fmt::format("{}n={} rank {}: {}", i ? "; " : "", samples[i].n, samples[i].r, seq_text(samples[i]));
  if (samples.size() > kShownSamples) out += fmt::format("; ... {} more", samples.size() - kShownSamples);
  return out;
}

const char* const kStructureHint =
    "\n  This quantity is structure (it decides what the replay does), so it needs a model that fits every "
    "value exactly. A value that follows a model only from some rank count on needs one more traced rank "
    "count (or larger ones); a quantity of MPI synchronisation the tracer pruned may need runs traced with "
    "MPIOR_PRUNE=0.";

const char* const kDealtMark = "a fixed total E dealt over the ranks";

std::string dealt_hint(const std::vector<Sample>& pts, const char* what) {
  std::vector<int64_t> totals = share_totals(pts);
  if (totals.empty()) return "";
  if (totals.size() > 4) totals.resize(4);
  return fmt::format(
      "\n  {} a constant plus a rank's share of a fixed total E dealt over the ranks (floor(E/n), one more on "
      "the first E mod n ranks; E = {}{} fit these ranks), as HDF5 deals its metadata entries at file close: "
      "the total and which entries each rank writes come from the values of every rank at once.",
      what, fmt::join(totals, ", "), totals.size() == 4 ? ", ..." : "");
}

std::string dealt_lengths_hint(const std::vector<SeqSample>& samples) {
  std::vector<Sample> lengths;
  for (const SeqSample& s : samples) lengths.push_back({s.r, s.n, int64_t(trace::seq_expand(s.items).size())});
  return dealt_hint(lengths, "Their number is");
}

bool SeqFit::approximate() const {
  return permuted || std::any_of(fields.begin(), fields.end(), [](const FieldFit& f) { return f.approximate; });
}

int64_t floor_of(const std::vector<Sample>& pts) {
  int64_t lo = 0;
  for (const Sample& s : pts) lo = std::min(lo, s.y);
  return lo;
}

SeqFit mean_fit(const std::vector<SeqSample>& samples) {
  std::vector<Sample> pts;
  for (const SeqSample& s : samples) {
    std::vector<int64_t> v = trace::seq_expand(s.items);
    long double sum = 0;
    for (int64_t x : v) sum += static_cast<long double>(x + s.offset);
    pts.push_back({s.r, s.n, v.empty() ? 0 : int64_t(std::llround(sum / static_cast<long double>(v.size())))});
  }
  return {{{0, FieldFit::scalar, fit_best(pts), true, floor_of(pts)}}, {SeqItem{0, 0, 0}}};
}

std::string fits_text(const SeqFit& fits, std::string* names) {
  std::string text;
  for (const FieldFit& f : fits.fields) {
    if (std::string_view(f.fit.name) == "constant" && !f.approximate) continue;
    const char* field = f.field == FieldFit::scalar ? "value" : f.field == FieldFit::shift ? "stride" : "count";
    text += fmt::format("{}item {} {} {} {}{}", text.empty() ? "" : "; ", f.item, field, f.approximate ? "~" : "=",
                        f.fit.formula(),
                        f.approximate      ? fmt::format(" (best fit: {})", f.fit.name)
                        : f.fit.determined ? " (determined by as many runs as it has coefficients)"
                                           : "");
    if (names->find(f.fit.name) == std::string::npos) *names += (names->empty() ? "" : " + ") + std::string(f.fit.name);
  }
  return text;
}

}  // namespace mpior::extrap
