#include "postproc/summary_files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <utility>

#include "postproc/summary_writer.hpp"
#include "trace/bytes_text.hpp"
#include "trace/text.hpp"

namespace mpior::postproc {

namespace {

// File names and command lines as text (bytes_text.hpp).
std::string E(std::string_view s) { return trace::escape_bytes(s); }

constexpr size_t kTopFiles = 10;
constexpr int32_t kListedRanks = 64;

double seconds(int64_t ns) { return double(ns) / 1e9; }

std::string yes_no(bool b) { return b ? "yes" : "no"; }

void text_job(std::string& out, const SummaryHeader& set) {
  const trace::JobInfo& j = set.job;
  out += fmt::format("mpior summary of {}\n", set.dir);
  out += fmt::format("job {}: {} ranks, started on {} in {}\n", job_id_text(j.job_id), j.size, E(j.host), E(j.cwd));
  out += fmt::format("command: {}\n", E(j.cmdline));
  std::string placed = trace::placement_summary(set.placements);
  if (!placed.empty()) out += "placement: " + placed + "\n";
  out += set.complete ? "\n" : "INCOMPLETE: the job ended early; the traces stop where it did (see warnings)\n\n";
}

void text_times(std::string& out, const SummaryHeader& set, const Summary& s) {
  out +=
      fmt::format("time (s)       {:>12} {:>12} {:>12} {:>12} {:>12}\n", "io", "mpi", "compute", "cpu wait", "traced");
  auto row = [&](const std::string& label, const RankTotals& r) {
    out += fmt::format("{:<14} {:>12.6f} {:>12.6f} {:>12.6f} {:>12.6f} {:>12.6f}\n", label, seconds(r.io_ns),
                       seconds(r.mpi_ns), seconds(r.compute_ns()), seconds(r.cpu_wait_ns), seconds(r.traced_ns));
  };
  for (int32_t r = 0; r < set.size() && r < kListedRanks; ++r) row(fmt::format("rank {}", r), s.ranks[size_t(r)]);
  if (set.size() > kListedRanks) out += fmt::format("... {} more ranks in summary.json\n", set.size() - kListedRanks);
  RankTotals t = s.total();
  out += fmt::format("{:<14} {:>12.6f} {:>12.6f} {:>12.6f} {:>12.6f} {:>12.6f}\n", "total", seconds(t.io_ns),
                     seconds(t.mpi_ns), seconds(t.traced_ns - t.io_ns - t.mpi_ns - t.cpu_wait_ns),
                     seconds(t.cpu_wait_ns), seconds(t.traced_ns));
  out += "(cpu wait: ranks ready to compute but waiting for a CPU; left out of the computation the replay does)\n\n";
}

// Per MPI function: calls kept in the trace and calls pruned online.
nlohmann::json json_mpi_kinds(const Summary& s) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t k = 0; k < s.kinds.size(); ++k) {
    const KindTotals& t = s.kinds[k];
    if (t.calls && trace::is_mpi(trace::Kind(k)))
      j[std::string(trace::name(trace::Kind(k)))] = {{"logged", t.calls - t.pruned}, {"pruned", t.pruned}};
  }
  return j;
}

void text_ops(std::string& out, const Summary& s) {
  out += "operations (application calls; MPI calls kept in the trace and pruned online)\n";
  out += fmt::format("  {:<26} {:>12} {:>10} {:>10} {:>16} {:>12}\n", "function", "calls", "logged", "pruned", "bytes",
                     "time (s)");
  std::vector<size_t> kinds;
  for (size_t k = 0; k < s.kinds.size(); ++k)
    if (s.kinds[k].calls) kinds.push_back(k);
  std::stable_sort(kinds.begin(), kinds.end(), [&](size_t a, size_t b) { return s.kinds[a].calls > s.kinds[b].calls; });
  for (size_t k : kinds) {
    const KindTotals& t = s.kinds[k];
    out += fmt::format("  {:<26} {:>12} {:>10} {:>10} {:>16} {:>12.6f}\n", trace::name(trace::Kind(k)), t.calls,
                       t.calls - t.pruned, t.pruned, t.bytes, seconds(t.time_ns));
  }
  if (kinds.empty()) out += "  (none)\n";
  out += "\n";
}

void text_files(std::string& out, const Analysis& a) {
  // Files only the libraries touched (nested calls) have no application calls.
  std::vector<int32_t> order;
  for (int32_t id : files_by_bytes(a))
    if (a.summary.files[size_t(id)].ops > 0) order.push_back(id);
  out += fmt::format("files: {} named, {} used by the application (top {} by bytes)\n", a.files.files.size(),
                     order.size(), std::min(order.size(), kTopFiles));
  out +=
      fmt::format("  {:>14} {:>14} {:>10}  {:<7} {:>12}  {}\n", "written", "read", "calls", "created", "needs", "path");
  for (size_t i = 0; i < order.size() && i < kTopFiles; ++i) {
    const trace::PlanFile& f = a.files.files[size_t(order[i])];
    const FileTotals& t = a.summary.files[size_t(order[i])];
    out += fmt::format("  {:>14} {:>14} {:>10}  {:<7} {:>12}  {}{}\n", t.bytes_written, t.bytes_read, t.ops,
                       yes_no(f.created), f.initial_size, E(f.path), f.directory ? "/" : "");
  }
  out += "\n";
}

nlohmann::json json_excluded(const Summary& s) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t k = 0; k < s.kinds.size(); ++k)
    if (s.kinds[k].excluded) j[std::string(trace::name(trace::Kind(k)))] = s.kinds[k].excluded;
  return j;
}

void text_excluded(std::string& out, const Summary& s) {
  std::string list;
  for (size_t k = 0; k < s.kinds.size(); ++k)
    if (s.kinds[k].excluded)
      list += fmt::format("{}{} {}", list.empty() ? "" : ", ", trace::name(trace::Kind(k)), s.kinds[k].excluded);
  out += "calls on excluded paths (MPIOR_EXCLUDE, not traced): " + (list.empty() ? "none" : list) + "\n\n";
}

void text_mpi(std::string& out, const Analysis& a) {
  const Summary& s = a.summary;
  const PairingStats& m = a.messages;
  out += fmt::format("MPI: {} calls ({} logged, {} pruned)\n", s.mpi_logged + s.mpi_pruned, s.mpi_logged, s.mpi_pruned);
  out += fmt::format("  {} communicators, {} collective instances\n", a.comms.comms.size(), a.collectives.instances);
  out += fmt::format("  {} messages paired on {} channels, {} sends never received, {} receives {}\n", m.messages,
                     m.channels, m.unreceived, m.never_completed,
                     s.pruning ? "posted whose completion was pruned (or never came)" : "never completed");
}

}  // namespace

SummaryHeader header_of(const TraceSet& set) {
  SummaryHeader h{set.dir, set.job, {}, {}, complete(set)};
  for (const trace::RankTrace& t : set.ranks)
    h.hosts.push_back(t.process.host), h.placements.push_back(t.process.placement);
  return h;
}

std::string summary_text(const TraceSet& set, const Analysis& a) { return summary_text(header_of(set), a); }
nlohmann::json summary_json(const TraceSet& set, const Analysis& a) { return summary_json(header_of(set), a); }

std::vector<int32_t> files_by_bytes(const Analysis& a) {
  std::vector<int32_t> order(a.files.files.size());
  std::iota(order.begin(), order.end(), 0);
  const auto& t = a.summary.files;
  std::stable_sort(order.begin(), order.end(), [&](int32_t x, int32_t y) {
    int64_t bx = t[size_t(x)].bytes_written + t[size_t(x)].bytes_read;
    int64_t by = t[size_t(y)].bytes_written + t[size_t(y)].bytes_read;
    if (bx != by) return bx > by;
    return t[size_t(x)].ops > t[size_t(y)].ops;
  });
  return order;
}

std::string summary_text(const SummaryHeader& set, const Analysis& a) {
  std::string out;
  text_job(out, set);
  text_times(out, set, a.summary);
  text_ops(out, a.summary);
  text_files(out, a);
  text_excluded(out, a.summary);
  text_mpi(out, a);
  if (!a.warnings.empty()) {
    out += "\nwarnings:\n";
    for (const std::string& w : a.warnings) out += "  " + w + "\n";
  }
  return out;
}

namespace {

nlohmann::json json_times(const RankTotals& t, int64_t compute_ns) {
  return {{"io_s", seconds(t.io_ns)},
          {"mpi_s", seconds(t.mpi_ns)},
          {"compute_s", seconds(compute_ns)},
          {"cpu_wait_s", seconds(t.cpu_wait_ns)},
          {"traced_s", seconds(t.traced_ns)}};
}

}  // namespace

nlohmann::json summary_json(const SummaryHeader& set, const Analysis& a) {
  return nlohmann::json::parse(summary_json_text(set, a, nlohmann::json::object()));
}

nlohmann::json summary_json_lean(const SummaryHeader& set, const Analysis& a) {
  const Summary& s = a.summary;
  nlohmann::json ops = nlohmann::json::object(), op_totals = nlohmann::json::object();
  for (size_t k = 0; k < s.kinds.size(); ++k) {
    const KindTotals& t = s.kinds[k];
    if (!t.calls) continue;
    std::string name(trace::name(trace::Kind(k)));
    ops[name] = t.calls;
    op_totals[name] = {{"calls", t.calls}, {"bytes", t.bytes}, {"time_s", seconds(t.time_ns)}};
  }
  const PairingStats& m = a.messages;
  RankTotals total = s.total();
  return {
      {"job",
       {{"id", job_id_text(set.job.job_id)},
        {"size", set.job.size},
        {"cmdline", E(set.job.cmdline)},
        {"cwd", E(set.job.cwd)},
        {"host", E(set.job.host)}}},
      {"ranks", set.size()},
      {"complete", set.complete},
      {"ops", ops},
      {"op_totals", op_totals},
      {"excluded", json_excluded(s)},
      {"mpi",
       {{"events", s.mpi_logged + s.mpi_pruned},
        {"logged", s.mpi_logged},
        {"pruned", s.mpi_pruned},
        {"pruning", s.pruning},
        {"by_kind", json_mpi_kinds(s)}}},
      {"time", json_times(total, total.traced_ns - total.io_ns - total.mpi_ns - total.cpu_wait_ns)},
      {"messages",
       {{"paired", m.messages},
        {"channels", m.channels},
        {"unreceived_sends", m.unreceived},
        {"never_completed_receives", m.never_completed}}},
      {"collectives", {{"instances", a.collectives.instances}, {"per_comm", a.collectives.per_comm}}},
      {"comms", a.comms.comms.size()},
      {"warnings", a.warnings},
  };
}

}  // namespace mpior::postproc

namespace mpior::postproc {

namespace {

constexpr size_t kListedStreams = 64;

struct StreamFacts {
  std::vector<int64_t> ranks;
  size_t loops = 0;
  size_t varying = 0;  // Params whose values differ by rank (have rank variants)
};

StreamFacts facts_of(const trace::Stream& s) {
  StreamFacts f{s.rank_list(), 0, 0};
  for (const trace::Node& n : s.nodes) f.loops += n.loop;
  auto count = [&f](const trace::Param& p) { f.varying += p.ranked >= 0; };
  for (const trace::Node& n : s.nodes) count(n.iters);
  for (const trace::Leaf& l : s.leaves) {
    for (const trace::Param& p : l.args) count(p);
    count(l.ret);
    count(l.err);
    if (s.lossless) {
      count(l.exact_gap);
      count(l.exact_dur);
    }
  }
  return f;
}

size_t rank_threads(const trace::Plan& plan) {
  size_t n = 0;
  for (const trace::Stream& s : plan.streams) n += size_t(trace::seq_length(s.view(s.ranks)));
  return n;
}

}  // namespace

std::string rank_ranges(const std::vector<int64_t>& ranks, size_t max_chars) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i + 1;
    int64_t stride = j < ranks.size() ? ranks[j] - ranks[i] : 0;
    while (j < ranks.size() && ranks[j] - ranks[j - 1] == stride) ++j;
    if (!out.empty()) out += ",";
    if (j - i >= 3) {
      out += fmt::format("{}-{}", ranks[i], ranks[j - 1]);
      if (stride != 1) out += fmt::format(":{}", stride);
      i = j;
    } else {
      out += std::to_string(ranks[i]);
      ++i;
    }
    if (out.size() > max_chars) return out.substr(0, max_chars) + "…";
  }
  return out;
}

std::string plan_streams_text(const trace::Plan& plan) {
  std::string out =
      fmt::format("\nplan: {} streams for {} rank threads of {} ranks (ranks with equal streams merged)\n",
                  plan.streams.size(), rank_threads(plan), plan.ranks.size());
  out += fmt::format("  {:>6} {:>6} {:>6} {:>9} {:>5} {:>7}  {}\n", "stream", "thread", "ranks", "positions", "loops",
                     "by-rank", "rank list");
  for (size_t i = 0; i < plan.streams.size() && i < kListedStreams; ++i) {
    const trace::Stream& s = plan.streams[i];
    StreamFacts f = facts_of(s);
    out += fmt::format("  {:>6} {:>6} {:>6} {:>9} {:>5} {:>7}  {}\n", i, s.thread, f.ranks.size(), s.leaves.size(),
                       f.loops, f.varying, rank_ranges(f.ranks));
  }
  if (plan.streams.size() > kListedStreams)
    out += fmt::format("  ... {} more streams in summary.json\n", plan.streams.size() - kListedStreams);
  return out;
}

nlohmann::json plan_streams_json(const trace::Plan& plan) {
  nlohmann::json streams = nlohmann::json::array();
  for (const trace::Stream& s : plan.streams) {
    StreamFacts f = facts_of(s);
    streams.push_back({{"thread", s.thread},
                       {"ranks", f.ranks.size()},
                       {"rank_list", rank_ranges(f.ranks, SIZE_MAX)},
                       {"positions", s.leaves.size()},
                       {"loops", f.loops},
                       {"params_by_rank", f.varying}});
  }
  return {{"streams", plan.streams.size()}, {"rank_threads", rank_threads(plan)}, {"per_stream", streams}};
}

}  // namespace mpior::postproc
