#include "postproc/plan.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "merge/merge.hpp"
#include "postproc/post_progress.hpp"
#include "trace/format.hpp"
#include "trace/tool_error.hpp"

namespace mpior::postproc {

namespace fs = std::filesystem;

namespace {

bool is_single_rank(const trace::Stream& s, int32_t rank) {
  auto items = s.view(s.ranks);
  if (trace::seq_length(items) != 1) return false;
  trace::SeqCursor c(items);
  return c.next() == rank;
}

void set_single_rank(trace::Stream& s, int32_t rank) {
  if (is_single_rank(s, rank)) return;
  trace::SeqItem item{rank, 0, 0};
  s.ranks = s.values.add({&item, 1});
}

void add_tallies(trace::KindTallies& into, const trace::KindTallies& from) {
  for (size_t k = 0; k < into.size(); ++k) {
    into[k].calls += from[k].calls;
    into[k].time_ns += from[k].time_ns;
  }
}

void write_text(const std::string& path, const std::string& text) {
  trace::write_file_atomic(path, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

// Each rank's trace start after the earliest rank's, on rank 0's clock (the
// offsets measured at MPI_Init): when the ranks started, for the replay. All
// 0 unless every rank called MPI_Init (a rank without one has no offset).
// A missing rank's placeholder (TraceSet::missing) has no clock: it starts
// with the earliest.
void aligned_starts(const TraceSet& set, trace::Plan& plan) {
  auto absent = [&](size_t r) { return std::binary_search(set.missing.begin(), set.missing.end(), int32_t(r)); };
  int64_t first = INT64_MAX;
  for (size_t r = 0; r < set.ranks.size(); ++r) {
    const trace::ProcessInfo& p = set.ranks[r].process;
    if (!p.mpi) return;
    if (!absent(r)) first = std::min(first, p.clock_mono_ns + p.clock_offset_ns);
  }
  for (size_t r = 0; r < plan.ranks.size(); ++r) {
    const trace::ProcessInfo& p = set.ranks[r].process;
    plan.ranks[r].start_ns = absent(r) ? 0 : p.clock_mono_ns + p.clock_offset_ns - first;
  }
}

}  // namespace

trace::Plan build_plan(TraceSet set, const Analysis& a) {
  trace::Plan plan;
  plan.job = set.job;
  plan.job.trace_files.clear();  // where the traces were: the job record's, not the plan's
  plan.files = a.files.files;
  plan.comms = a.comms.plan_comms();
  for (const trace::RankTrace& t : set.ranks) {
    trace::PlanRank& pr = plan.ranks.emplace_back();
    pr.host = t.process.host, pr.cwd = t.process.cwd, pr.traced_ns = t.process.end_ns;
    pr.cpu_wait_ns = t.process.cpu_wait_ns;
    pr.placement = t.process.placement;
  }
  aligned_starts(set, plan);
  for (int32_t r = 0; r < set.size(); ++r) {
    trace::RankTrace& t = set.ranks[size_t(r)];
    plan.ranks[size_t(r)].files = a.files.local_to_global[size_t(r)];
    plan.ranks[size_t(r)].comms = a.comms.local_to_global[size_t(r)];
    for (trace::Stream& s : t.streams) {
      set_single_rank(s, r);
      plan.streams.push_back(std::move(s));
    }
    add_tallies(plan.pruned, t.pruned);
  }
  // Ranks that did the same thing become one stream with a rank list.
  report_progress("merging streams", 0, 1);
  plan.streams = merge::merge_streams(std::move(plan.streams));
  report_progress("writing the plan", 1, 1);
  return plan;
}

namespace {

// Creates dir and removes its plan file, whatever follows.
std::string clear_plan_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw ToolError(
        dir + ": cannot create the plan directory: " + (ec ? ec.message() : std::string("a file of that name exists")));
  std::string plan_path = (fs::path(dir) / trace::kPlanFileName).string();
  if (::unlink(plan_path.c_str()) != 0 && errno != ENOENT)
    throw ToolError(plan_path + ": cannot replace the earlier plan: " + std::strerror(errno));
  return plan_path;
}

}  // namespace

void write_summary_only(const std::string& dir, const std::string& summary_txt, const std::string& summary_json) {
  clear_plan_dir(dir);
  write_text((fs::path(dir) / "summary.txt").string(), summary_txt);
  write_text((fs::path(dir) / "summary.json").string(), summary_json);
}

void write_plan_dir(const std::string& dir, const trace::Plan& plan, const std::string& summary_txt,
                    const std::string& summary_json) {
  std::vector<uint8_t> bytes = trace::encode(plan);
  std::string plan_path = clear_plan_dir(dir);
  write_text((fs::path(dir) / "summary.txt").string(), summary_txt);
  write_text((fs::path(dir) / "summary.json").string(), summary_json);
  trace::write_file_atomic(plan_path, bytes);
}

void write_plan_dir_atomic(const std::string& dir, const trace::Plan& plan, const std::string& summary_txt,
                           const std::string& summary_json) {
  fs::path target = fs::path(dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();
  fs::path tmp = target;
  tmp += ".tmp-" + std::to_string(::getpid());
  std::error_code ec;
  fs::remove_all(tmp, ec);
  try {
    write_plan_dir(tmp.string(), plan, summary_txt, summary_json);
    if (!fs::exists(target, ec)) {
      fs::rename(tmp, target);
      return;
    }
    if (!fs::is_directory(target, ec)) throw ToolError(dir + ": exists and is not a directory");
    // An existing directory: the plan's files move in one by one, the plan last.
    for (const char* name : {"summary.txt", "summary.json", trace::kPlanFileName})
      fs::rename(tmp / name, target / name);
    fs::remove(tmp, ec);
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp, ec);
    throw ToolError(dir + ": cannot write the plan directory: " + e.code().message());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace mpior::postproc
