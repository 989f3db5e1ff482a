#include "predict/predict.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <utility>

namespace mpior::predict {

namespace {

// A reference time per operation below this is the tracer's own cost and the
// timer's noise as much as the file system's (an fsync on tmpfs): a ratio
// to it over kAmplified multiplies that noise by the target's cost (fsync on
// ext4: thousands), so such a class is predicted as its count times the
// target's time per operation. Small ratios (tmpfs writes against ext4's)
// stay ratios.
constexpr double kRatioFloorS = 10e-6;
constexpr double kAmplified = 10;

// Whether a ratio over kAmplified to the reference's time per operation `ref` would multiply what is not
// the class's work there: a time under kRatioFloorS, or a close that may flush on the target where the
// reference only closed (the system call's own cost, which load stretches past the floor): such a ratio
// says nothing of other classes' scale, nor of the ranks meeting around those closes.
bool amplifies(const ClassKey& k, double ref) { return ref < kRatioFloorS || may_flush(k); }

// Multiplicative bounds: never 0 or negative, however wide the spread.
void bounds(ClassResult& r, double lo_ratio, double hi_ratio, double traced_s, double factor) {
  r.low_s = lo_ratio * traced_s / (1 + factor * r.rel_sd);
  r.high_s = hi_ratio * traced_s * (1 + factor * r.rel_sd);
}

size_t runs_of(const ClassResult& r) { return std::min(r.runs.reference.size(), r.runs.target.size()); }

// Each repetition's own prediction (its reference and target runs, in the
// order they ran): the interval holds at least their span.
void span_of_runs(ClassResult& r, const IoClass& c, double traced_s) {
  size_t n = std::min(r.runs.reference.size(), r.runs.target.size());
  for (size_t i = 0; i < n; ++i) {
    double ref = r.runs.reference[i], tgt = r.runs.target[i];
    double one = r.per_op_basis ? double(c.count) * tgt : ref > 0 ? tgt / ref * traced_s : 0.0;
    if (!(one > 0) || !std::isfinite(one)) continue;
    r.low_s = std::min(r.low_s, one);
    r.high_s = std::max(r.high_s, one);
  }
}

// The traced time's own uncertainty (relative variance): one traced run is
// one draw of the reference's run-to-run spread, taken as the fio runs'; of
// several (combine_runs), the median varies by their measured spread (at
// least the fio runs') over their number.
double traced_part(const IoClass& c, double ref_part) {
  if (ref_part == 0 || c.traced_runs_ns.size() < 2) return ref_part;
  std::vector<double> runs(c.traced_runs_ns.begin(), c.traced_runs_ns.end());
  double sd = rel_sd(runs);
  return std::max(ref_part, sd * sd) / double(runs.size());
}

// How much one application run's time varies run to run (the class's
// traced runs, 0 for one run): a short I/O phase varies far more than a
// second-long fio job of the same calls, so one run on the target is taken to
// vary at least as the application's runs did on the reference.
double application_rel_sd(const IoClass& c) {
  return rel_sd(std::vector<double>(c.traced_runs_ns.begin(), c.traced_runs_ns.end()));
}

// The spread of the repetitions' own ratios (each repetition's reference and
// target runs, in the order they ran; the target's time per op on a per-op
// basis): a burst of load that slows one side of a repetition shows here even
// when each side's runs alone look steady.
double ratio_rel_sd(const ClassResult& r) {
  std::vector<double> ratios;
  for (size_t i = 0; i < runs_of(r); ++i)
    if (r.runs.reference[i] > 0) ratios.push_back(r.runs.target[i] / (r.per_op_basis ? 1.0 : r.runs.reference[i]));
  return rel_sd(ratios);
}

// The spread of the median of a class's traced runs (0 for one run).
double median_rel_sd(const IoClass& c) {
  std::vector<double> runs(c.traced_runs_ns.begin(), c.traced_runs_ns.end());
  return runs.size() < 2 ? 0.0 : rel_sd(runs) / std::sqrt(double(runs.size()));
}

// The ratio of the medians of each side's runs: a burst of other work on the
// machine during one run moves a mean (a fio run 3x the others at load 3),
// not the median. Each side's run-to-run spread: of its runs' means where
// they differ from the typical times (fio's median latencies steady within 2%
// while the application's traced time varied 15% run to run: the means carry
// the bursts as the traced run did). rel_sd: of one application run's predicted time: the means' uncertainty
// (each side's run-to-run spread, or the repetitions' ratios' where that is
// wider, over sqrt(runs)), one run's own spread on the target (the fio
// runs', or the application's traced runs' where that is wider) and, when
// the prediction scales the traced time, the reference's: the traced time is
// one run there.
// An extrapolated plan's times were never measured at its rank count (a fit
// to a few small counts knows nothing of many ranks contending for one
// journal or device): its classes take the target's time per operation,
// measured by fio jobs at the class's concurrency at that count.
void measured_class(ClassResult& r, const IoClass& c, bool extrapolated) {
  double traced_s = double(c.time_ns) / 1e9, ref = median(r.runs.reference), tgt = median(r.runs.target);
  double k = double(std::max<size_t>(1, runs_of(r)));
  r.reference_rel_sd = std::max(rel_sd(r.runs.reference), rel_sd(r.runs.reference_mean));
  r.target_rel_sd = std::max(rel_sd(r.runs.target), rel_sd(r.runs.target_mean));
  r.per_op_basis = c.count > 0 && (extrapolated || (amplifies(c.key, ref) && tgt > kAmplified * ref));
  r.extrapolated = extrapolated && r.per_op_basis;
  r.ratio_rel_sd = ratio_rel_sd(r);
  r.application_rel_sd = application_rel_sd(c);
  double ref_part = r.per_op_basis ? 0.0 : r.reference_rel_sd * r.reference_rel_sd;
  double tgt_part = r.target_rel_sd * r.target_rel_sd;
  double mean_part = std::max(ref_part + tgt_part, r.ratio_rel_sd * r.ratio_rel_sd) / k;
  double one_run = std::max(tgt_part, r.application_rel_sd * r.application_rel_sd);
  r.rel_sd = std::sqrt(mean_part + one_run + traced_part(c, ref_part));
  r.predicted_s = r.per_op_basis ? double(c.count) * tgt : tgt / ref * traced_s;
  r.ratio = traced_s > 0 ? r.predicted_s / traced_s : tgt / ref;
  bounds(r, r.ratio, r.ratio, traced_s, spread_factor(runs_of(r)));
  span_of_runs(r, c, traced_s);
}

// Synced writes and their syncs (the same job measures both: one key but the
// op) are predicted together, by the ratio of a write's whole cycle (the
// write and its share of the syncs) on the target to the reference's: how a
// file system splits a cycle between the write and the fsync call depends on
// who flushed what first (on ext4 one rank's fsync writes back the other's
// pages of the shared file, and one rank's first write stalls), so the
// calls' times move between the two classes while their sum holds: the
// write class's ratio alone would mispredict the pair.
size_t sync_partner(const Classes& cs, const std::vector<std::optional<Runs>>& runs, size_t w) {
  ClassKey k = cs.classes[w].key;
  if (k.op != Op::write || k.sync_every <= 0 || !runs[w]) return SIZE_MAX;
  k.op = Op::sync;
  for (size_t i = 0; i < cs.classes.size(); ++i)
    if (cs.classes[i].key == k && runs[i]) return i;
  return SIZE_MAX;
}

std::vector<double> cycles(const std::vector<double>& write, const std::vector<double>& sync, double every) {
  std::vector<double> out;
  for (size_t i = 0; i < std::min(write.size(), sync.size()); ++i) out.push_back(write[i] + sync[i] / every);
  return out;
}

// A pair on the target's time per op: the writes' count times a cycle is
// the pair's time, shared between the two classes as traced (a sync's count
// times a write's cycle would count the cycle once per sync).
void per_op_pair(Prediction& p, const Classes& cs, size_t w, size_t s) {
  double tw = double(cs.classes[w].time_ns), ts = double(cs.classes[s].time_ns);
  double pair = p.classes[w].predicted_s;  // the writes' count x the target's cycle
  for (size_t i : {w, s}) {
    ClassResult& r = p.classes[i];
    double share = tw + ts > 0 ? double(cs.classes[i].time_ns) / (tw + ts) : (i == w ? 1.0 : 0.0);
    double scale = r.predicted_s > 0 ? pair * share / r.predicted_s : 0.0;
    r.predicted_s *= scale, r.low_s *= scale, r.high_s *= scale;
    double t = double(cs.classes[i].time_ns) / 1e9;
    r.ratio = t > 0 ? r.predicted_s / t : r.ratio;
  }
}

// Both classes of a synced-write pair from their runs' cycles (their own runs kept for the report).
void cycle_pair(Prediction& p, const Classes& cs, size_t w, size_t s) {
  const Runs &rw = p.classes[w].runs, &rs = p.classes[s].runs;
  double every = double(std::max<int64_t>(1, cs.classes[w].key.sync_every));
  // The runs' means: a cycle mixes a CPU-bound call (a tmpfs write, preempted on a busy machine as the
  // program's were) with one waiting for the device (an ext4 fsync); the medians dropped the first's
  // preemptions and not the second's (checkpoint_sim tmpfs -> ext4 +147% at load 6-7 from the medians).
  auto of = [](const std::vector<double>& mean, const std::vector<double>& typical) {
    return mean.empty() ? typical : mean;
  };
  Runs cyc{cycles(of(rw.reference_mean, rw.reference), of(rs.reference_mean, rs.reference), every),
           cycles(of(rw.target_mean, rw.target), of(rs.target_mean, rs.target), every)};
  for (size_t i : {w, s}) {
    ClassResult& r = p.classes[i];
    Runs own = std::move(r.runs);
    r.runs = cyc;
    measured_class(r, cs.classes[i], cs.extrapolated);
    r.runs = std::move(own);
    r.cycle_basis = true;
    r.cycle_runs = cyc;
  }
  if (p.classes[w].per_op_basis) per_op_pair(p, cs, w, s);
}

size_t index_of(const Classes& cs, const ClassKey& k) {
  for (size_t i = 0; i < cs.classes.size(); ++i)
    if (cs.classes[i].key == k) return i;
  return SIZE_MAX;
}

// The ratio of a measured class, 1 (as traced) for one not measured or predicted from the target's time per
// op alone: its ratio to a reference near 0 (a tmpfs fsync or close, 6,000 for ext4's) says nothing of the
// ranks' time meeting around those calls.
double ratio_of(const Classes& cs, const Prediction& p, const ClassKey& k, double* rel_sd = nullptr) {
  size_t j = index_of(cs, k);
  bool measured = j != SIZE_MAX && p.classes[j].measured && (!p.classes[j].per_op_basis || p.classes[j].extrapolated);
  if (rel_sd) *rel_sd = measured ? p.classes[j].rel_sd : 0.0;
  return measured ? p.classes[j].ratio : 1.0;
}

// MPI-IO's own time: the part a rank waited in a collective for the slowest
// other rank's file-system calls beyond its own (IoClass::waiting) scales as
// the class of those calls; the rest (the ranks' exchanges, arriving apart,
// waits for a CPU) stays as traced. The interval spans that, as traced
// (ratio 1) and all of it scaled as the classes of the calls it was spent in
// (the file system may also slow what the trace cannot tell apart), widened
// by the traced runs' spread and the measured classes' over the part scaled.
void own_class(ClassResult& r, const IoClass& c, const Classes& cs, const Prediction& p, double factor) {
  // Shares of `within`'s total: with several traced runs it sums theirs (combine_runs), time_ns is a median.
  double t = double(c.time_ns) / 1e9, total = 0, scaled = 0, all = 0, sd = 0;
  for (const auto& [k, ns] : c.within) {
    total += double(ns);
    all += double(ns) * ratio_of(cs, p, k);
  }
  for (const auto& [k, ns] : c.waiting) {
    double part_sd = 0;
    scaled += double(ns) * (ratio_of(cs, p, k, &part_sd) - 1);
    sd += double(ns) * part_sd;  // only the part it scales varies with the class's runs
  }
  r.ratio = total > 0 ? 1 + scaled / total : 1.0;
  double whole = total > 0 ? all / total : 1.0;
  r.rel_sd = std::hypot(median_rel_sd(c), total > 0 ? sd / total : 0.0);
  r.predicted_s = r.ratio * t;
  bounds(r, std::min({r.ratio, whole, 1.0}), std::max({r.ratio, whole, 1.0}), t, factor);
}

}  // namespace

double spread_factor(size_t samples) {
  // Student's t, two-sided 95%, for 1-10, 15, 20 and 30 degrees of freedom.
  static constexpr std::pair<size_t, double> t[] = {{1, 12.71}, {2, 4.30},  {3, 3.18}, {4, 2.78}, {5, 2.57},
                                                    {6, 2.45},  {7, 2.36},  {8, 2.31}, {9, 2.26}, {10, 2.23},
                                                    {15, 2.13}, {20, 2.09}, {30, 2.04}};
  if (samples < 2) return t[0].second;
  for (auto [df, v] : t)
    if (samples - 1 <= df) return v;
  return 2.0;
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double rel_sd(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  double m = mean(v), ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return m > 0 ? std::sqrt(ss / double(v.size() - 1)) / m : 0.0;
}

namespace {
// The classes that make 80% of the predicted I/O time, largest first.
void pick_dominant(Prediction& p) {
  std::vector<size_t> order(p.classes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return p.classes[a].predicted_s > p.classes[b].predicted_s; });
  double covered = 0;
  for (size_t i : order) {
    if (covered >= 0.8 * p.predicted_io_s || p.classes[i].predicted_s <= 0) break;
    p.dominant.push_back(i);
    covered += p.classes[i].predicted_s;
  }
}
}  // namespace

Prediction predict_io(const Classes& cs, const std::vector<std::optional<Runs>>& runs) {
  Prediction p;
  p.classes.resize(cs.classes.size());
  double weighted = 0, weight = 0, lo_ratio = INFINITY, hi_ratio = 0, max_sd = 0, factor = 2.0;
  for (size_t i = 0; i < cs.classes.size(); ++i) {
    if (!runs[i]) continue;
    ClassResult& r = p.classes[i];
    r.measured = true;
    r.runs = *runs[i];
    measured_class(r, cs.classes[i], cs.extrapolated);
  }
  for (size_t w = 0; w < cs.classes.size(); ++w)
    if (size_t s = sync_partner(cs, runs, w); s != SIZE_MAX) cycle_pair(p, cs, w, s);
  for (size_t i = 0; i < cs.classes.size(); ++i) {
    if (!runs[i]) continue;
    ClassResult& r = p.classes[i];
    double t = double(cs.classes[i].time_ns) / 1e9;
    p.fio_target_rel_sd += r.target_rel_sd * t;
    max_sd = std::max(max_sd, r.rel_sd);
    factor = std::max(factor, spread_factor(runs_of(r)));
    if (r.per_op_basis && !r.extrapolated) continue;  // an amplified ratio: not one for other classes
    weighted += r.ratio * t;
    weight += t;
    lo_ratio = std::min(lo_ratio, r.ratio);
    hi_ratio = std::max(hi_ratio, r.ratio);
  }
  double fallback = weight > 0 ? weighted / weight : 1.0, measured_s = 0;
  for (size_t i = 0; i < cs.classes.size(); ++i)
    if (p.classes[i].measured) measured_s += double(cs.classes[i].time_ns) / 1e9;
  p.fio_target_rel_sd = measured_s > 0 ? p.fio_target_rel_sd / measured_s : 0.0;
  if (weight <= 0) lo_ratio = hi_ratio = 1.0;
  p.high_ratio = hi_ratio;
  for (size_t i = 0; i < cs.classes.size(); ++i) {
    ClassResult& r = p.classes[i];
    double t = double(cs.classes[i].time_ns) / 1e9;
    if (cs.classes[i].key.op == Op::mpiio_own) {
      own_class(r, cs.classes[i], cs, p, factor);
      p.unmeasured_s += t;  // no benchmark measured it: its interval spans as traced to scaled
    } else if (!r.measured) {
      r.ratio = fallback;
      r.rel_sd = max_sd;
      r.predicted_s = r.ratio * t;
      bounds(r, std::min(lo_ratio, 1.0), std::max(hi_ratio, 1.0), t, factor);
      p.unmeasured_s += t;
    } else if (r.rel_sd > kSpreadFlag) {
      p.spread.push_back(i);
    }
    p.traced_io_s += t;
    p.predicted_io_s += r.predicted_s;
    p.low_s += r.low_s;
    p.high_s += r.high_s;
  }
  p.traced_io_s = double(cs.io_ns) / 1e9;
  p.fio_low_s = p.low_s;
  p.fio_high_s = p.high_s;
  pick_dominant(p);
  return p;
}

void widen_by_target_spread(Prediction& p, const std::vector<double>& runs) {
  double sd = rel_sd(runs), pred = p.predicted_io_s;
  p.target_rel_sd = sd;
  p.low_s = p.fio_low_s;
  p.high_s = p.fio_high_s;
  if (!(pred > 0)) return;
  if (sd > 0) {
    // Independent sources of error: the relative half-widths add in quadrature; bounds multiplicative.
    double h = spread_factor(runs.size()) * sd;
    double lo = p.fio_low_s > 0 ? std::hypot(pred / p.fio_low_s - 1, h) : INFINITY;
    double hi = std::hypot(p.fio_high_s / pred - 1, h);
    p.low_s = pred / (1 + lo);
    p.high_s = pred * (1 + hi);
  }
  // At least the target's measured run-to-run range for this application.
  for (double v : runs)
    if (v > 0 && std::isfinite(v)) {
      p.low_s = std::min(p.low_s, v);
      p.high_s = std::max(p.high_s, v);
    }
}

namespace {
std::vector<double> seconds(const std::vector<int64_t>& ns) {
  std::vector<double> s;
  for (int64_t v : ns) s.push_back(double(v) / 1e9);
  return s;
}
}  // namespace

namespace {
// Of MPI-IO's own time, the part waiting for other ranks' file-system calls (the part scaled).
double waited_seconds(const IoClass& c) {
  double total = 0, waited = 0;
  for (const auto& [k, ns] : c.within) total += double(ns);
  for (const auto& [k, ns] : c.waiting) waited += double(ns);
  return total > 0 ? waited / total * double(c.time_ns) / 1e9 : 0.0;
}

// What the fio job of a measured class did, or why the class has none.
void add_job_json(nlohmann::json& j, size_t i, const JobPlan& jp, const ClassResult& r) {
  if (!r.measured) {
    j["why_not_measured"] = jp.unmeasured[i];
    return;
  }
  const Job& job = jp.jobs[size_t(jp.job_of[i])];
  j["job"] = job.file();
  j["fio_section"] = jp.section[i];
  j["volume"] = {{"per_rank_calls", job.per_rank_ops},
                 {"traced_per_rank_calls", job.traced_per_rank_ops},
                 {"passes", job.passes},
                 {"capped", job.per_rank_ops < job.traced_per_rank_ops},
                 {"ranks_per_fsync", job.sync_ranks}};
  if (job.sleeps_per_call[0] >= 0 || job.sleeps_per_call[1] >= 0)
    j["cpu_bound"] = {{"sleeps_per_call", {job.sleeps_per_call[0], job.sleeps_per_call[1]}},
                      {"fio_jobs", {job.bounded[0], job.bounded[1]}}};
  j["reference_s_per_op"] = r.runs.reference;
  j["target_s_per_op"] = r.runs.target;
  j["reference_mean_s_per_op"] = r.runs.reference_mean;
  j["target_mean_s_per_op"] = r.runs.target_mean;
  if (r.cycle_basis) {
    j["reference_s_per_cycle"] = r.cycle_runs.reference;
    j["target_s_per_cycle"] = r.cycle_runs.target;
  }
}

nlohmann::json class_json(size_t i, const IoClass& c, const JobPlan& jp, const ClassResult& r) {
  nlohmann::json j = {{"id", i + 1},
                      {"label", class_label(c.key)},
                      {"op", op_name(c.key.op)},
                      {"size", c.key.size},
                      {"pattern", c.key.size ? (c.key.random ? "random" : "sequential") : "-"},
                      {"files", c.key.shared ? "shared" : "per-process"},
                      {"sync_every", c.key.sync_every},
                      {"concurrency", c.concurrency()},
                      {"ranks", c.ranks.size()},
                      {"peak_at_once", c.peak},
                      {"mean_at_once", c.at_once},
                      {"fitted_at_once", c.fitted_at_once},
                      {"kinds", c.kinds},
                      {"count", c.count},
                      {"bytes", c.bytes},
                      {"traced_s", double(c.time_ns) / 1e9},
                      {"measured", r.measured},
                      {"basis", c.key.op == Op::mpiio_own ? "waits for other ranks' file-system calls scaled"
                                : !r.measured             ? "fallback ratio"
                                : r.extrapolated          ? "target time per op (extrapolated plan)"
                                : r.per_op_basis          ? "target time per op"
                                : r.cycle_basis           ? "ratio of the synced write's cycle"
                                                          : "ratio"},
                      {"ratio", r.ratio},
                      {"rel_sd", r.rel_sd},
                      {"reference_rel_sd", r.reference_rel_sd},
                      {"target_rel_sd", r.target_rel_sd},
                      {"ratio_rel_sd", r.ratio_rel_sd},
                      {"application_rel_sd", r.application_rel_sd},
                      {"predicted_s", r.predicted_s},
                      {"interval", {r.low_s, r.high_s}}};
  if (!c.traced_runs_ns.empty()) j["traced_runs_s"] = seconds(c.traced_runs_ns);
  if (c.key.op == Op::mpiio_own) j["waited_s"] = waited_seconds(c);
  add_job_json(j, i, jp, r);
  return j;
}
}  // namespace

nlohmann::json report_json(const ReportInput& in, const Classes& cs, const JobPlan& jp, const Prediction& p) {
  nlohmann::json classes = nlohmann::json::array();
  for (size_t i = 0; i < cs.classes.size(); ++i) classes.push_back(class_json(i, cs.classes[i], jp, p.classes[i]));
  nlohmann::json dominant = nlohmann::json::array(), spread = nlohmann::json::array();
  for (size_t i : p.dominant) dominant.push_back(i + 1);
  for (size_t i : p.spread) spread.push_back(i + 1);
  nlohmann::json out = {{"plan", in.plan},
                        {"plans", in.plans},
                        {"traced_runs_io_s", seconds(cs.io_runs_ns)},
                        {"reference", in.reference},
                        {"target", in.target},
                        {"repeat", in.repeat},
                        {"job_seconds", in.job_seconds},
                        {"jobs_dir", in.jobs_dir},
                        {"traced_io_s", p.traced_io_s},
                        {"predicted_io_s", p.predicted_io_s},
                        {"interval", {p.low_s, p.high_s}},
                        {"fio_interval", {p.fio_low_s, p.fio_high_s}},
                        {"target_rel_sd", p.target_rel_sd},
                        {"fio_target_rel_sd", p.fio_target_rel_sd},
                        {"dominant", dominant},
                        {"interval_width", p.width()},
                        {"unmeasured_s", p.unmeasured_s},
                        {"spread_over_20", spread},
                        {"classes", classes}};
  if (cs.extrapolated) out["at_once_fitted_to"] = cs.fitted_from;
  if (in.replay_io_s)
    out["check"] = {{"replay_io_s", *in.replay_io_s},
                    {"replay_s", in.replay_s.value_or(0)},
                    {"replay_io_runs", in.replay_io_runs},
                    {"rel_sd", p.target_rel_sd}};
  return out;
}

namespace {
std::string traced_runs_text(const Classes& cs) {
  if (cs.io_runs_ns.size() < 2) return "";
  return fmt::format("; the median of {} traced runs: {:.6f}", cs.io_runs_ns.size(),
                     fmt::join(seconds(cs.io_runs_ns), ", "));
}
}  // namespace

std::string report_text(const ReportInput& in, const Classes& cs, const JobPlan& jp, const Prediction& p) {
  std::string plans =
      in.plans.size() > 1 ? fmt::format("{} traced runs ({})", in.plans.size(), fmt::join(in.plans, ", ")) : in.plan;
  std::string s = fmt::format("I/O time of {} predicted for {} (reference {}; {} runs of each fio job)\n\n", plans,
                              in.target, in.reference, in.repeat);
  s += fmt::format("{:>3} {:<40} {:>5} {:>9} {:>11} {:>9} {:>7} {:>11}  {}\n", "#", "class", "ranks", "count",
                   "traced_s", "ratio", "rsd%", "predicted_s", "job");
  for (size_t i = 0; i < cs.classes.size(); ++i) {
    const IoClass& c = cs.classes[i];
    const ClassResult& r = p.classes[i];
    std::string job = r.measured ? jp.jobs[size_t(jp.job_of[i])].file() : "(not measured: " + jp.unmeasured[i] + ")";
    if (r.extrapolated)
      job += " (count x target time per op at its concurrency: the plan's times are extrapolated)";
    else if (r.per_op_basis)
      job += " (count x target time per op: reference below 10 us per op, ratio over 10)";
    if (r.cycle_basis) job += " (ratio of a write's cycle: the write and its syncs)";
    if (r.measured && jp.jobs[size_t(jp.job_of[i])].bounded[1])
      job += fmt::format(" ({} at once on the target: its calls are CPU-bound there)",
                         jp.jobs[size_t(jp.job_of[i])].bounded[1]);
    s += fmt::format("{:>3} {:<40} {:>5} {:>9} {:>11.6f} {:>9.4f} {:>7.1f} {:>11.6f}  {}\n", i + 1, class_label(c.key),
                     c.concurrency(), c.count, double(c.time_ns) / 1e9, r.ratio, r.rel_sd * 100, r.predicted_s, job);
  }
  s += fmt::format("\ntraced I/O time     {:>12.6f} s (summed over ranks, as summary.json time.io_s{})\n",
                   p.traced_io_s, traced_runs_text(cs));
  s += fmt::format("predicted I/O time  {:>12.6f} s  interval [{:.6f}, {:.6f}] s, {:.0f}% wide\n", p.predicted_io_s,
                   p.low_s, p.high_s, p.width() * 100);
  if (p.unmeasured_s > 0)
    s += fmt::format("not measured        {:.1f}% of the traced I/O time (its classes widen the interval)\n",
                     p.traced_io_s > 0 ? 100 * p.unmeasured_s / p.traced_io_s : 0.0);
  if (!p.spread.empty()) {
    std::vector<size_t> ids;
    for (size_t i : p.spread) ids.push_back(i + 1);
    s += fmt::format(
        "WARNING             classes {} vary over {:.0f}% run to run: their ratio alone is not to be trusted\n",
        fmt::join(ids, ", "), kSpreadFlag * 100);
  }
  if (p.target_rel_sd > 0)
    s += fmt::format(
        "                    (fio runs alone [{:.6f}, {:.6f}] s; widened by the replays' run-to-run "
        "spread on the target, {:.1f}%)\n",
        p.fio_low_s, p.fio_high_s, p.target_rel_sd * 100);
  s += fmt::format("target spread       {:.1f}% run to run in the fio runs (time-weighted over measured classes){}\n",
                   p.fio_target_rel_sd * 100,
                   p.target_rel_sd > 0 ? fmt::format(", {:.1f}% in the replays", p.target_rel_sd * 100) : "");
  std::string dom;
  for (size_t i : p.dominant) dom += fmt::format("{}{}", dom.empty() ? "" : ", ", i + 1);
  s += fmt::format("dominant classes    {}\n", dom.empty() ? "-" : dom);
  if (in.replay_io_s)
    s += fmt::format("replay I/O time     {:>12.6f} s (mpior-replay on the target, median of {}; {:.3f} s in all)\n",
                     *in.replay_io_s, in.replay_io_runs.size(), in.replay_s.value_or(0));
  s += fmt::format("fio job files in    {}\n", in.jobs_dir);
  return s;
}

}  // namespace mpior::predict
