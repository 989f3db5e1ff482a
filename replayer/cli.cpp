#include "replayer/cli.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>

#include "report/progress.hpp"
#include "trace/format.hpp"
#include "trace/tool_error.hpp"

namespace mpior::replay {

void add_options(CLI::App& app, CliOptions& cli) {
  app.add_option("PLAN", cli.plan, "plan directory written by mpior-post (or the plan.mpior in it)")->required();
  app.add_option("--fs", cli.fs, "target directory: traced path P is replayed as DIR/P; nothing leaves it")->required();
  app.add_option("--threads", cli.threads,
                 "number of ranks to replay; must equal the plan's (use mpior-post --extrapolate for another)")
      ->check(CLI::PositiveNumber);
  app.add_option("--json", cli.json, "also write the report as JSON to FILE");
  app.add_option("--timing", cli.timing,
                 "gaps and durations of statistical streams: each position's mean, or "
                 "draws from its histogram")
      ->check(CLI::IsMember({"mean", "sample"}))
      ->capture_default_str();
  app.add_option("--seed", cli.seed, "seed of --timing sample")->capture_default_str();
  app.add_flag("--io-only", cli.io_only,
               "the I/O time alone: no compute gaps and no MPI call costs; keeps the I/O, its order and the "
               "synchronization that gates it");
  app.add_option("--compute-scale", cli.compute_scale, "multiply every compute gap (0.5: compute twice as fast)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--stdio", cli.stdio,
                 "stdout/stderr writes go to DIR/__stdout__, DIR/__stderr__ (file) or "
                 "/dev/null (null)")
      ->check(CLI::IsMember({"file", "null"}))
      ->capture_default_str();
  app.add_option("--io-log", cli.io_log,
                 "also write every replayed file call, per rank and thread in order, to FILE "
                 "(for comparing replays; grows with the number of calls)");
  app.add_flag("--io-log-times", cli.io_log_times,
               "with --io-log: each line also gives the call's start (ns after the replay's start), its replayed "
               "duration and its traced duration (ns)")
      ->needs("--io-log");
  app.add_option("--io-level", cli.io_level,
                 "posix (default without --mpi): the POSIX calls the file system saw under each MPI-IO call "
                 "(ROMIO's collective buffering included); mpiio: each MPI-IO call as independent positioned I/O on "
                 "its view, or with --mpi (its default) through MPI_File_* on the target's MPI-IO")
      ->check(CLI::IsMember({"posix", "mpiio"}));
  app.add_flag("--mpi", cli.mpi,
               "run under mpirun (mpirun -n K mpior-replay --mpi ...): K MPI processes, each replaying a contiguous "
               "block of the plan's ranks, with real messages, collectives and MPI-IO; rank 0 prints the report");
  app.add_option("--timeline", cli.timeline,
                 "also write the replay as Chrome trace-event JSON to FILE (ui.perfetto.dev), in the form of "
                 "mpior-post --timeline");
  app.add_option("--html", cli.html,
                 "also write a self-contained HTML report of the replay to FILE, traced against replayed time "
                 "per rank included");
  app.add_option("--timeline-max-events", cli.max_events,
                 "at most N calls recorded for --timeline and --html, shared by the threads")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("-q,--quiet", cli.quiet, "no progress bar");
  app.add_option("--bind", cli.bind,
                 "CPU placement of the rank threads: auto (bound where the traced ranks ran bound, as many CPUs "
                 "each), none, core (one CPU each)")
      ->check(CLI::IsMember({"auto", "none", "core"}))
      ->capture_default_str();
  app.add_option("--hint", cli.hints,
                 "with --mpi: MPI-IO hint KEY=VALUE given to every MPI_File_open (repeat for several; ROMIO's "
                 "cb_nodes, cb_buffer_size, romio_cb_write...); the report says which ones MPI put in force")
      ->type_name("KEY=VALUE");
  app.add_option("--stall-timeout", cli.stall_timeout_s,
                 "seconds with every thread blocked before the replay stops as deadlocked")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

Hints parse_hints(const CliOptions& cli) {
  Hints out;
  for (const std::string& h : cli.hints) {
    size_t eq = h.find('=');
    if (eq == 0 || eq == std::string::npos || eq + 1 == h.size() || h.find_first_of(" \t") != std::string::npos)
      throw ToolError("--hint '" + h + "': expected KEY=VALUE (an MPI-IO hint such as cb_nodes=4)");
    out.emplace_back(h.substr(0, eq), h.substr(eq + 1));
  }
  if (out.empty()) return out;
  // The threads and --io-level posix replay the POSIX calls ROMIO made when
  // traced: no MPI_File_open takes the hints, so they would change nothing.
  if (!cli.mpi)
    throw ToolError(
        "--hint needs --mpi: only MPI mode opens files through MPI_File_open (the threaded replay "
        "replays the POSIX calls the traced MPI-IO made)");
  if (cli.io_level == "posix")
    throw ToolError(
        "--hint with --io-level posix: the POSIX calls the traced MPI-IO made are replayed, no "
        "MPI_File_open takes the hints (use --io-level mpiio, --mpi's default)");
  return out;
}

std::string plan_file_of(const std::string& plan) {
  std::error_code ec;
  if (std::filesystem::is_directory(plan, ec)) return (std::filesystem::path(plan) / trace::kPlanFileName).string();
  return plan;
}

void check_thread_count(int64_t requested, const trace::Plan& plan) {
  if (requested < 0 || size_t(requested) == plan.ranks.size()) return;
  throw ToolError("--threads " + std::to_string(requested) + " does not match the plan's " +
                  std::to_string(plan.ranks.size()) +
                  " ranks; to replay at another scale, extrapolate a plan for it first (mpior-post --extrapolate " +
                  std::to_string(requested) + " ...)");
}

ReplayOptions to_replay_options(const CliOptions& cli, const std::string& plan_file) {
  ReplayOptions opt;
  opt.plan_name = plan_file;
  opt.setup.fs = cli.fs;
  opt.setup.stdio_null = cli.stdio == "null";
  opt.cursor.timing =
      cli.timing == "sample" ? trace::CursorOptions::Timing::sample : trace::CursorOptions::Timing::mean;
  opt.cursor.seed = cli.seed;
  opt.compute_scale = cli.io_only ? 0.0 : cli.compute_scale;
  opt.io_only = cli.io_only;
  opt.stall_timeout_s = cli.stall_timeout_s;
  opt.io_log = cli.io_log;
  opt.io_log_times = cli.io_log_times;
  opt.mpiio_level = cli.io_level == "mpiio";
  opt.progress = report::progress_wanted(cli.quiet);
  parse_bind_mode(cli.bind, opt.bind);  // checked by the option's IsMember
  if (!cli.timeline.empty() || !cli.html.empty()) opt.record_calls = cli.max_events;
  return opt;
}

}  // namespace mpior::replay
