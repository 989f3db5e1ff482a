#include "trace_set.hpp"

#include <cstdio>
#include <filesystem>
#include <set>
#include <system_error>

#include "children.hpp"
#include "cursor.hpp"
#include "error.hpp"
#include "format.hpp"
#include "post_progress.hpp"
#include "spill.hpp"

namespace mpior::postproc {
namespace fs = std::filesystem;

std::string job_id_text(uint64_t id) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(id));
  return buf;
}

namespace {

std::string join_path(const std::string& dir, const std::string& name) { return (fs::path(dir) / name).string(); }

// A job still marked running crashed (or is running): its rank traces are
// what the tracer saved (at the signal, or the last periodic flush); each
// unfinished rank gets a warning saying where its trace ends.
trace::JobInfo read_job_record(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw PostError(dir + ": not a directory (expected an mpior trace directory)");
  std::string job_path = join_path(dir, trace::kJobFileName);
  if (!fs::exists(job_path, ec))
    throw PostError(job_path + ": missing; " + dir + " is not a complete mpior trace directory");
  return trace::read_job(job_path);
}

// Rank numbers of the rank files present; a rank the job does not have is an error.
std::set<int32_t> present_ranks(const std::string& dir, const trace::JobInfo& job) {
  std::set<int32_t> ranks;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    int32_t r = trace::rank_from_file_name(it->path().filename().string());
    if (r < 0) continue;
    if (r >= job.size)
      throw PostError(it->path().string() + ": rank " + std::to_string(r) + ", but " +
                      join_path(dir, trace::kJobFileName) + " says the job has " + std::to_string(job.size) +
                      " ranks (a file of another run?)");
    ranks.insert(r);
  }
  if (ec) throw PostError(dir + ": cannot list: " + ec.message());
  return ranks;
}

void require_all_ranks(const std::string& dir, const trace::JobInfo& job, const std::set<int32_t>& present) {
  std::string missing;
  int32_t count = 0;
  for (int32_t r = 0; r < job.size; ++r) {
    if (present.count(r)) continue;
    if (++count <= 8) missing += (missing.empty() ? "" : ", ") + join_path(dir, trace::rank_file_name(r));
  }
  if (count == 0) return;
  if (count > 8) missing += " and " + std::to_string(count - 8) + " more";
  throw PostError(dir + ": " + std::to_string(count) + " of " + std::to_string(job.size) +
                  " rank files missing: " + missing);
}

// "incomplete: rank 0 ended without MPI_Finalize after 20011 events (last: write at 0.512 s, the trace
// was saved at 0.600 s)".
std::string where_it_ends(const trace::RankTrace& t) {
  uint64_t events = 0;
  trace::Event last{}, ev{};
  bool any = false;
  for (const trace::Stream& s : t.streams) {
    trace::EventCursor c(s, t.process.rank);
    while (c.next(ev)) {
      ++events;
      if (!any || ev.start_ns >= last.start_ns) last = ev;
      any = true;
    }
  }
  std::string out = "incomplete: rank " + std::to_string(t.process.rank) + " ended without " +
                    (t.process.mpi ? "MPI_Finalize" : "a normal exit") + " after " + std::to_string(events) + " events";
  char buf[160];
  if (any)
    std::snprintf(buf, sizeof buf, " (last: %s at %.6f s", std::string(trace::name(last.kind)).c_str(),
                  double(last.start_ns) / 1e9);
  out += any ? buf : " (";
  std::snprintf(buf, sizeof buf, "%strace saved at %.6f s); the replay stops there", any ? ", " : "",
                double(t.process.end_ns) / 1e9);
  return out + buf;
}

}  // namespace

bool complete(const TraceSet& set) {
  if (set.job.state != trace::JobState::complete) return false;
  for (const trace::RankTrace& t : set.ranks)
    if (!t.process.finished) return false;
  return true;
}

void check_trace_set(TraceSet& set) {
  if (set.paths.size() != set.ranks.size()) {
    set.paths.clear();
    for (int32_t r = 0; r < set.size(); ++r) set.paths.push_back("<memory rank " + std::to_string(r) + ">");
  }
  if (set.size() != set.job.size)
    throw PostError(set.dir + ": " + std::to_string(set.size()) + " rank traces for a job of " +
                    std::to_string(set.job.size) + " ranks");
  std::string job_path = join_path(set.dir, trace::kJobFileName);
  for (int32_t r = 0; r < set.size(); ++r) {
    const trace::ProcessInfo& p = set.ranks[size_t(r)].process;
    const std::string& path = set.path(r);
    if (p.job_id != set.job.job_id)
      throw PostError(path + ": trace of job " + job_id_text(p.job_id) + ", but " + job_path + " is job " +
                      job_id_text(set.job.job_id) + " (a file of another run)");
    if (p.rank != r)
      throw PostError(path + ": holds rank " + std::to_string(p.rank) + ", but its name says rank " +
                      std::to_string(r));
    if (p.size != set.job.size)
      throw PostError(path + ": says the job has " + std::to_string(p.size) + " ranks, " + job_path + " says " +
                      std::to_string(set.job.size));
    if (!p.finished) set.warnings.push_back(path + ": " + where_it_ends(set.ranks[size_t(r)]));
  }
}

TraceSet read_trace_dir(const std::string& dir) {
  TraceSet set;
  set.dir = dir;
  set.job = read_job_record(dir);
  require_all_ranks(dir, set.job, present_ranks(dir, set.job));
  set.ranks.reserve(size_t(set.job.size));
  for (int32_t r = 0; r < set.job.size; ++r) {
    report_progress("reading ranks", uint64_t(r), uint64_t(set.job.size));
    set.paths.push_back(join_path(dir, trace::rank_file_name(r)));
    set.ranks.push_back(trace::read_rank_trace_with_spill(dir, r, &set.warnings));
  }
  check_trace_set(set);
  set.children = fold_children(set);
  return set;
}

}  // namespace mpior::postproc
