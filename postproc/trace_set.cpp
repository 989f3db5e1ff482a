#include "postproc/trace_set.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <system_error>

#include "merge/merge_job.hpp"
#include "postproc/children.hpp"
#include "postproc/entered_collectives.hpp"
#include "postproc/journal_recover.hpp"
#include "postproc/post_progress.hpp"
#include "trace/cursor.hpp"
#include "trace/format.hpp"
#include "trace/format_aggregate.hpp"
#include "trace/spill_reader.hpp"
#include "trace/tool_error.hpp"

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
  if (!fs::is_directory(dir, ec)) throw ToolError(dir + ": not a directory (expected an mpior trace directory)");
  std::string job_path = join_path(dir, trace::kJobFileName);
  if (!fs::exists(job_path, ec))
    throw ToolError(job_path + ": missing; " + dir + " is not a complete mpior trace directory");
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
      throw ToolError(it->path().string() + ": rank " + std::to_string(r) + ", but " +
                      join_path(dir, trace::kJobFileName) + " says the job has " + std::to_string(job.size) +
                      " ranks (a file of another run?)");
    ranks.insert(r);
  }
  if (ec) throw ToolError(dir + ": cannot list: " + ec.message());
  return ranks;
}

// "DIR/rank-000001.mpior, DIR/rank-000003.mpior and 5 more"
std::string missing_files(const std::string& dir, const std::vector<int32_t>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size() && i < 8; ++i)
    out += (out.empty() ? "" : ", ") + join_path(dir, trace::rank_file_name(ranks[i]));
  if (ranks.size() > 8) out += " and " + std::to_string(ranks.size() - 8) + " more";
  return out;
}

std::vector<int32_t> missing_ranks(const trace::JobInfo& job, const std::vector<char>& have) {
  std::vector<int32_t> out;
  for (int32_t r = 0; r < job.size; ++r)
    if (!have[size_t(r)]) out.push_back(r);
  return out;
}

// The placeholder of a rank without a trace: its place in the job, no events.
trace::RankTrace missing_rank(const trace::JobInfo& job, int32_t r, bool mpi) {
  trace::RankTrace t;
  t.process.job_id = job.job_id;
  t.process.rank = r;
  t.process.size = job.size;
  t.process.mpi = mpi;
  return t;
}

// The aggregate files (ranks.mpior, ranks-NNNNNN.mpior) in dir, sorted; every
// file the job record lists must be there.
std::vector<std::string> aggregate_paths(const std::string& dir, const trace::JobInfo& job) {
  std::string job_path = join_path(dir, trace::kJobFileName);
  std::error_code ec;
  for (const trace::TraceFileRanks& f : job.trace_files)
    if (!fs::exists(join_path(dir, f.name), ec))
      throw ToolError(join_path(dir, f.name) + ": missing, but " + job_path + " says it holds " +
                      std::to_string(f.ranks.size()) + " rank(s), first rank " +
                      (f.ranks.empty() ? std::string("none") : std::to_string(f.ranks[0])));
  std::vector<std::string> out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (trace::is_aggregate_file_name(it->path().filename().string())) out.push_back(it->path().string());
  if (ec) throw ToolError(dir + ": cannot list: " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

// A rank file the rank finished itself (I/O after MPI_Finalize, a spill, an
// aggregation that failed) is newer than what an aggregate holds; an
// unfinished one is a periodic flush the aggregate supersedes.
bool finished_rank_file(const std::string& path) {
  std::vector<uint8_t> bytes = trace::read_file(path);
  return trace::decode_rank_trace(bytes, path).process.finished;
}

void check_same_job(const TraceSet& set, const std::string& path, uint64_t job_id, int32_t size) {
  std::string job_path = join_path(set.dir, trace::kJobFileName);
  if (job_id != set.job.job_id)
    throw ToolError(path + ": traces of job " + job_id_text(job_id) + ", but " + job_path + " is job " +
                    job_id_text(set.job.job_id) + " (a file of another run)");
  if (size != set.job.size)
    throw ToolError(path + ": says the job has " + std::to_string(size) + " ranks, " + job_path + " says " +
                    std::to_string(set.job.size));
}

// Whether rank r of the job file `path` is to be read: not read already, no
// finished rank file of its own.
bool take_rank(const TraceSet& set, const std::string& path, int32_t r, const std::set<int32_t>& rank_files,
               const std::vector<char>& have) {
  if (have[size_t(r)])
    throw ToolError(path + ": holds rank " + std::to_string(r) + ", which " + set.path(r) + " holds too");
  return !(rank_files.count(r) && finished_rank_file(join_path(set.dir, trace::rank_file_name(r))));
}

// The job's merged trace (merged.mpior), when there: every rank it holds,
// its streams expanded back for the rank (merge/merge_job.hpp).
void read_merged(TraceSet& set, const std::set<int32_t>& rank_files, std::vector<char>& have) {
  std::string path = join_path(set.dir, trace::kMergedFileName);
  std::error_code ec;
  if (!fs::exists(path, ec)) return;
  trace::MergedJob m = trace::decode_merged_job(trace::read_file(path), path);
  check_same_job(set, path, m.job_id, m.size);
  std::vector<trace::RankTrace> ranks = merge::rank_traces(m, path);
  for (trace::RankTrace& t : ranks) {
    int32_t r = t.process.rank;
    if (!take_rank(set, path, r, rank_files, have)) continue;
    set.ranks[size_t(r)] = std::move(t);
    set.paths[size_t(r)] = path + " (rank " + std::to_string(r) + ")";
    have[size_t(r)] = 1;
  }
}

// Reads the ranks one aggregate file holds into set (have: ranks read).
void read_aggregate(TraceSet& set, const std::string& path, const std::set<int32_t>& rank_files,
                    std::vector<char>& have) {
  std::vector<uint8_t> bytes = trace::read_file(path);
  trace::AggregateIndex index = trace::decode_aggregate_index(bytes, path);
  check_same_job(set, path, index.job_id, index.size);
  for (size_t i = 0; i < index.entries.size(); ++i) {
    int32_t r = index.entries[i].rank;
    if (!take_rank(set, path, r, rank_files, have)) continue;
    std::string name = path + " (rank " + std::to_string(r) + ")";
    set.ranks[size_t(r)] = trace::decode_rank_trace(trace::aggregate_entry(bytes, index, i, path), name);
    set.paths[size_t(r)] = name;
    have[size_t(r)] = 1;
  }
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
    throw ToolError(set.dir + ": " + std::to_string(set.size()) + " rank traces for a job of " +
                    std::to_string(set.job.size) + " ranks");
  std::string job_path = join_path(set.dir, trace::kJobFileName);
  for (int32_t r = 0; r < set.size(); ++r) {
    const trace::ProcessInfo& p = set.ranks[size_t(r)].process;
    const std::string& path = set.path(r);
    if (p.job_id != set.job.job_id)
      throw ToolError(path + ": trace of job " + job_id_text(p.job_id) + ", but " + job_path + " is job " +
                      job_id_text(set.job.job_id) + " (a file of another run)");
    if (p.rank != r)
      throw ToolError(path + ": holds rank " + std::to_string(p.rank) + ", but its name says rank " +
                      std::to_string(r));
    if (p.size != set.job.size)
      throw ToolError(path + ": says the job has " + std::to_string(p.size) + " ranks, " + job_path + " says " +
                      std::to_string(set.job.size));
    bool absent = std::binary_search(set.missing.begin(), set.missing.end(), r);
    if (!p.finished && !absent) set.warnings.push_back(path + ": " + where_it_ends(set.ranks[size_t(r)]));
  }
}

namespace {

// Placeholders for the missing ranks (MPI if any traced rank was), one
// warning naming them.
void fill_missing(TraceSet& set) {
  if (set.missing.empty()) return;
  bool mpi = false;
  for (const trace::RankTrace& t : set.ranks) mpi = mpi || t.process.mpi;
  for (int32_t r : set.missing) {
    set.ranks[size_t(r)] = missing_rank(set.job, r, mpi);
    set.paths[size_t(r)] = join_path(set.dir, trace::rank_file_name(r)) + " (missing)";
  }
  set.warnings.push_back(std::to_string(set.missing.size()) + " of " + std::to_string(set.job.size) +
                         " ranks have no trace (killed before their first flush?): " +
                         missing_files(set.dir, set.missing) + "; what follows covers the other ranks");
}

}  // namespace

TraceSet read_trace_dir(const std::string& dir, MissingRanks missing) {
  TraceSet set;
  set.dir = dir;
  set.job = read_job_record(dir);
  recover_journals(dir, set.job.size, &set.warnings);
  std::set<int32_t> rank_files = present_ranks(dir, set.job);
  std::vector<std::string> aggregates = aggregate_paths(dir, set.job);
  set.ranks.resize(size_t(set.job.size));
  set.paths.resize(size_t(set.job.size));
  std::vector<char> have(size_t(set.job.size), 0);
  read_merged(set, rank_files, have);
  for (size_t i = 0; i < aggregates.size(); ++i) {
    report_progress("reading ranks", i, aggregates.size() + rank_files.size());
    read_aggregate(set, aggregates[i], rank_files, have);
  }
  std::vector<char> held = have;
  for (int32_t r : rank_files) have[size_t(r)] = 1;
  set.missing = missing_ranks(set.job, have);
  if (!set.missing.empty() && missing == MissingRanks::refuse)
    throw ToolError(dir + ": " + std::to_string(set.missing.size()) + " of " + std::to_string(set.job.size) +
                    " rank files missing (and no aggregate file holds them): " + missing_files(dir, set.missing));
  for (int32_t r = 0; r < set.job.size; ++r) {
    if (held[size_t(r)] || !have[size_t(r)]) continue;
    report_progress("reading ranks", uint64_t(r), uint64_t(set.job.size));
    set.paths[size_t(r)] = join_path(dir, trace::rank_file_name(r));
    set.ranks[size_t(r)] = trace::read_rank_trace_with_spill(dir, r, &set.warnings);
  }
  fill_missing(set);
  check_trace_set(set);
  set.children = fold_children(set);
  complete_entered_collectives(set);
  return set;
}

std::string rank_list(const std::vector<int32_t>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size() && i < 16; ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > 16) out += " and " + std::to_string(ranks.size() - 16) + " more";
  return out;
}

std::optional<std::pair<std::string, std::vector<uint8_t>>> held_rank(const std::string& dir, int32_t rank) {
  trace::JobInfo job = read_job_record(dir);
  std::string merged = join_path(dir, trace::kMergedFileName);
  std::error_code ec;
  if (fs::exists(merged, ec))
    for (trace::RankTrace& t : merge::rank_traces(trace::decode_merged_job(trace::read_file(merged), merged), merged))
      if (t.process.rank == rank) return std::pair{merged + " (rank " + std::to_string(rank) + ")", trace::encode(t)};
  for (const std::string& path : aggregate_paths(dir, job)) {
    std::vector<uint8_t> bytes = trace::read_file(path);
    trace::AggregateIndex index = trace::decode_aggregate_index(bytes, path);
    for (size_t i = 0; i < index.entries.size(); ++i)
      if (index.entries[i].rank == rank) {
        std::span<const uint8_t> e = trace::aggregate_entry(bytes, index, i, path);
        return std::pair{path + " (rank " + std::to_string(rank) + ")", std::vector<uint8_t>(e.begin(), e.end())};
      }
  }
  return std::nullopt;
}

}  // namespace mpior::postproc
