// --mpi: the process side of MPI mode (mpi_mode.hpp): MPI start-up, the
// checks every process agrees on, the replay of this process's ranks, and
// the reports merged by rank 0.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "replayer/cli.hpp"
#include "replayer/engine.hpp"
#include "replayer/mpi_mode.hpp"
#include "replayer/replay_report.hpp"
#include "trace/format.hpp"
#include "trace/tool_error.hpp"

namespace mpior::replay {
namespace {

using nlohmann::json;

// What one process measured, exactly (integers), for rank 0 to merge.
json payload(const Report& r) {
  json threads = json::array();
  for (const ThreadSummary& t : r.per_thread)
    threads.push_back({t.rank,
                       t.thread,
                       t.replay_ns,
                       t.traced_ns,
                       t.events,
                       t.io_ns,
                       t.compute_ns,
                       t.comm_ns,
                       t.wait_ns,
                       t.traced_io_ns,
                       t.traced_compute_ns,
                       t.traced_mpi_ns,
                       t.slept_waits,
                       t.late_ns,
                       t.cpu_wait_ns,
                       t.own_ns,
                       t.startup_ns,
                       t.traced_startup_ns,
                       t.charged_ns,
                       t.unpaid_ns,
                       t.cpus,
                       t.first_cpu,
                       t.sender_wait_ns,
                       t.costs_ns,
                       t.costed_calls});
  json ops = json::object();
  for (const auto& [name, s] : r.ops) ops[name] = {s.count, s.bytes, s.total_ns, s.max_ns};
  return {{"threads", threads},       {"ops", ops},
          {"errors", r.errors},       {"first", r.first_errors},
          {"skipped", r.skipped},     {"warnings", r.warnings},
          {"replay_ns", r.replay_ns}, {"wall_ns", r.wall_ns},
          {"setup_ns", r.setup_ns},   {"io_log", r.io_log},
          {"placement", r.placement}, {"setup_cpu_ns", r.setup_cpu_ns}};
}

void merge(Report& into, const json& j) {
  for (const json& t : j["threads"]) {
    ThreadSummary s;
    s.rank = t[0], s.thread = t[1], s.replay_ns = t[2], s.traced_ns = t[3], s.events = t[4];
    s.io_ns = t[5], s.compute_ns = t[6], s.comm_ns = t[7], s.wait_ns = t[8];
    s.traced_io_ns = t[9], s.traced_compute_ns = t[10], s.traced_mpi_ns = t[11];
    s.slept_waits = t[12], s.late_ns = t[13], s.cpu_wait_ns = t[14], s.own_ns = t[15];
    s.startup_ns = t[16], s.traced_startup_ns = t[17], s.charged_ns = t[18], s.unpaid_ns = t[19];
    s.cpus = t[20], s.first_cpu = t[21], s.sender_wait_ns = t[22];
    s.costs_ns = t[23], s.costed_calls = t[24];
    into.per_thread.push_back(s);
  }
  for (const auto& [name, v] : j["ops"].items()) {
    OpStats s;
    s.count = v[0], s.bytes = v[1], s.total_ns = v[2], s.max_ns = v[3];
    into.ops[name].merge(s);
  }
  into.errors += j["errors"].get<uint64_t>();
  for (const json& e : j["first"])
    if (into.first_errors.size() < ErrorLog::kKept) into.first_errors.push_back(e);
  into.skipped += j["skipped"].get<uint64_t>();
  for (const json& w : j["warnings"])
    if (std::find(into.warnings.begin(), into.warnings.end(), w.get<std::string>()) == into.warnings.end())
      into.warnings.push_back(w);
  into.replay_ns = std::max(into.replay_ns, j["replay_ns"].get<int64_t>());
  into.wall_ns = std::max(into.wall_ns, j["wall_ns"].get<int64_t>());
  into.setup_ns = std::max(into.setup_ns, j["setup_ns"].get<int64_t>());
  into.setup_cpu_ns += j["setup_cpu_ns"].get<int64_t>();  // every process's
  into.io_log += j["io_log"].get<std::string>();
  // Each process placed its own threads: the different decisions, once each.
  std::string placed = j["placement"].get<std::string>();
  if (into.placement.empty())
    into.placement = placed;
  else if (into.placement.find(placed) == std::string::npos)
    into.placement += " | " + placed;
}

// Rank 0 gets every process's report (its own first) and merges them.
void gather_reports(Report& rep, int me, int procs) {
  std::string mine = payload(rep).dump();
  int len = int(mine.size());
  std::vector<int> lens(size_t(me == 0 ? procs : 1)), at(lens.size());
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (me == 0) {
    int total = 0;
    for (int p = 0; p < procs; ++p) at[size_t(p)] = total, total += lens[size_t(p)];
    all.resize(size_t(total));
  }
  MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), at.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (me != 0) return;
  Report merged = rep;
  merged.per_thread.clear(), merged.ops.clear(), merged.first_errors.clear(), merged.warnings.clear();
  merged.errors = merged.skipped = 0;
  merged.replay_ns = merged.wall_ns = merged.setup_ns = merged.setup_cpu_ns = 0;
  merged.io_log.clear();
  for (int p = 0; p < procs; ++p)
    merge(merged, json::parse(all.substr(size_t(at[size_t(p)]), size_t(lens[size_t(p)]))));
  merged.threads = merged.per_thread.size();
  merged.traced_ns = 0;
  for (const ThreadSummary& t : merged.per_thread) merged.traced_ns = std::max(merged.traced_ns, t.traced_ns);
  std::sort(merged.per_thread.begin(), merged.per_thread.end(),
            [](const auto& a, const auto& b) { return std::tie(a.rank, a.thread) < std::tie(b.rank, b.thread); });
  rep = std::move(merged);
}

struct Prepared {
  trace::Plan plan;
  std::string plan_file;
  Hints hints;
  std::string error;
};

// Plan and options every process checks; they agree before going on.
void prepare(const CliOptions& cli, int procs, int provided, Prepared& p) {
  try {
    if (!cli.timeline.empty() || !cli.html.empty())
      throw ToolError("--timeline and --html are not available with --mpi (use the threaded replay)");
    p.hints = parse_hints(cli);
    p.plan_file = plan_file_of(cli.plan);
    p.plan = trace::read_plan(p.plan_file);
    check_thread_count(cli.threads, p.plan);
    validate_plan(p.plan, p.plan_file);
    // Real collectives and messages would wait for the missing ranks forever.
    if (!p.plan.missing.empty())
      throw ToolError(
          fmt::format("{}: a partial plan ({} of {} ranks left no trace) cannot be replayed with --mpi; "
                      "the threaded replay (without --mpi) replays the others",
                      p.plan_file, p.plan.missing.size(), p.plan.ranks.size()));
    if (size_t(procs) > p.plan.ranks.size())
      throw ToolError(fmt::format("{} MPI processes for a plan of {} ranks: run at most one process per rank", procs,
                                  p.plan.ranks.size()));
    bool threads = size_t(procs) < p.plan.ranks.size();
    for (const trace::Stream& s : p.plan.streams) threads = threads || s.thread > 0;
    if (threads && provided < MPI_THREAD_MULTIPLE)
      throw ToolError("this MPI does not provide MPI_THREAD_MULTIPLE, which several ranks per process need");
    if (provided < MPI_THREAD_SERIALIZED)  // the replay thread calls MPI, not the main one
      throw ToolError("this MPI does not provide MPI_THREAD_SERIALIZED, which the replay threads need");
  } catch (const ToolError& e) {
    p.error = e.what();
  }
}

int replay_here(const CliOptions& cli, Prepared& p, int me, int procs, bool thread_multiple) {
  ReplayOptions opt = to_replay_options(cli, p.plan_file);
  opt.progress = false;
  opt.stall_timeout_s = 1e9;  // the threads wait in MPI, not on the replay's own semaphores: the watchdog decides
  bool native = cli.io_level != "posix";
  opt.mpiio_level = false;
  opt.stack_bytes = 8 << 20;  // MPI's own calls (collectives, MPI-IO) need a full stack
  MpiBackend backend(p.plan, me, procs, native, p.hints);
  opt.backend = &backend;
  MpiWatchdog watchdog(backend.board(), cli.stall_timeout_s, me, thread_multiple);
  Report rep = replay_plan(p.plan, opt);
  watchdog.finish();
  std::string hints = backend.hints().describe(&rep.warnings);
  rep.fs += fmt::format(" (MPI mode: {} processes{}{})", procs, native ? ", MPI-IO through MPI_File_*" : "",
                        hints.empty() ? "" : ", hints " + hints);
  gather_reports(rep, me, procs);
  if (me != 0) return 0;
  if (!cli.json.empty()) write_json(cli.json, rep);
  if (!cli.io_log.empty()) write_io_log(cli.io_log, rep.io_log);
  print_text(std::cout, rep);
  std::cout.flush();
  if (std::string wrong = size_failure(rep); !wrong.empty()) {
    std::cerr << "mpior-replay: " << wrong << "\n";
    return 1;
  }
  return std::cout ? 0 : 1;
}

}  // namespace

int run_mpi_mode(const CliOptions& cli, int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE, me = 0, procs = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &procs);
  Prepared p;
  prepare(cli, procs, provided, p);
  int ok = p.error.empty(), all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  int status = 1;
  if (!all) {  // rank 0 names the problem; another process only when rank 0 saw none
    int first_bad = ok ? procs : me, who = 0;
    MPI_Allreduce(&first_bad, &who, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (me == who) std::cerr << "mpior-replay: " << (me ? fmt::format("process {}: ", me) : "") << p.error << "\n";
  } else {
    try {
      status = replay_here(cli, p, me, procs, provided >= MPI_THREAD_MULTIPLE);
    } catch (const std::exception& e) {
      std::cerr << "mpior-replay: process " << me << ": " << e.what() << "\n";
      std::cerr.flush();
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  MPI_Finalize();
  return status;
}

}  // namespace mpior::replay
