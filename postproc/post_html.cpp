#include "postproc/post_html.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "postproc/trace_set.hpp"
#include "report/collect.hpp"
#include "report/html_report.hpp"
#include "trace/cursor.hpp"
#include "trace/text.hpp"
#include "trace/tool_error.hpp"
#include "trace/transfer.hpp"

namespace mpior::postproc {

using report::is_record;
using report::loops_text;
using report::render_html;
using report::ReportCollector;
using report::ReportData;
using report::TableNames;
using report::write_file;

namespace {

constexpr size_t kLoopRanks = 4;  // ranks whose loop structure the report shows

std::vector<const std::vector<int32_t>*> members_of(const postproc::CommResolution& c) {
  std::vector<const std::vector<int32_t>*> out;
  for (const auto& g : c.comms) out.push_back(&g.members);
  return out;
}

std::vector<trace::CpuPlacement> placements_of(const postproc::TraceSet& set) {
  std::vector<trace::CpuPlacement> out;
  for (const trace::RankTrace& t : set.ranks) out.push_back(t.process.placement);
  return out;
}

void job_info(ReportData& d, const postproc::TraceSet& set, const postproc::Analysis& a) {
  const postproc::RankTotals t = a.summary.total();
  d.title = "mpior report: " + set.dir;
  d.job = {
      {"trace directory", set.dir},
      {"command", set.job.cmdline},
      {"working directory", set.job.cwd},
      {"host", set.job.host},
      {"job id", postproc::job_id_text(set.job.job_id)},
      {"ranks", std::to_string(set.size())},
      {"CPU placement", trace::placement_summary(placements_of(set))},
      {"I/O time (s, all ranks)", fmt::format("{:.6f}", double(t.io_ns) / 1e9)},
      {"MPI time (s, all ranks)", fmt::format("{:.6f}", double(t.mpi_ns) / 1e9)},
      {"waiting for a CPU (s, all ranks; left out of computation)", fmt::format("{:.6f}", double(t.cpu_wait_ns) / 1e9)},
      {"traced time (s, all ranks)", fmt::format("{:.6f}", double(t.traced_ns) / 1e9)},
      {"messages paired", std::to_string(a.messages.messages)},
      {"collective instances", std::to_string(a.collectives.instances)},
      {"online pruning", a.summary.pruning ? "on" : "off"}};
  if (!set.missing.empty()) d.job.push_back({"ranks without a trace (not in this report)", rank_list(set.missing)});
}

bool absent(const postproc::TraceSet& set, int32_t r) {
  return std::binary_search(set.missing.begin(), set.missing.end(), r);
}

}  // namespace

void write_trace_html(const std::string& file, const postproc::TraceSet& set, const postproc::Analysis& a) {
  ReportData d;
  job_info(d, set, a);
  // A missing rank's placeholder has no clock: it must not set the origin.
  int64_t first = INT64_MAX, span = 0;
  for (int32_t r = 0; r < set.size(); ++r)
    if (!absent(set, r)) first = std::min(first, set.ranks[size_t(r)].process.clock_real_ns);
  for (int32_t r = 0; r < set.size(); ++r)
    if (!absent(set, r))
      span = std::max(span, set.ranks[size_t(r)].process.clock_real_ns - first + set.ranks[size_t(r)].process.end_ns);
  ReportCollector c(set.size(), span);
  std::vector<std::string> paths;
  for (const auto& f : a.files.files) paths.push_back(f.path);
  auto members = members_of(a.comms);
  std::vector<const trace::Stream*> loop_streams;
  std::vector<std::string> headers;
  for (int32_t r = 0; r < set.size(); ++r) {
    const trace::RankTrace& t = set.ranks[size_t(r)];
    TableNames names(a.files.local_to_global[size_t(r)], paths, a.comms.local_to_global[size_t(r)], members);
    int64_t origin = t.process.clock_real_ns - first;
    for (const trace::Stream& s : t.streams) {
      if (size_t(r) < kLoopRanks) {
        loop_streams.push_back(&s);
        headers.push_back("rank " + std::to_string(r) + " thread " + std::to_string(s.thread));
      }
      trace::EventCursor cursor(s, r);
      trace::Event ev;
      while (cursor.next(ev))
        if (!is_record(ev) && !(ev.flags & trace::flag::on_behalf) && trace::app_level(ev))
          c.add(r, origin + ev.start_ns, ev.dur_ns, ev, names);
    }
    c.add_pruned(t.pruned);
  }
  c.fill(d);
  d.loops = loops_text(loop_streams, headers);
  if (set.size() > int32_t(kLoopRanks)) d.loops += "... (ranks " + std::to_string(kLoopRanks) + " and up not shown)\n";
  if (!write_file(file, render_html(d))) throw ToolError("cannot write --html " + file);
}

}  // namespace mpior::postproc
