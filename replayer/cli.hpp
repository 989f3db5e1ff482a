// The command line of mpior-replay, apart from main so tests can parse it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "replayer/engine.hpp"
#include "trace/model.hpp"

namespace CLI {
class App;
}

namespace mpior::replay {

struct CliOptions {
  std::string plan;  // plan directory, or the plan.mpior in it
  std::string fs;
  std::string json;
  int64_t threads = -1;  // -1: the plan's rank count
  std::string timing = "mean";
  uint64_t seed = 1;
  double compute_scale = 1.0;
  bool io_only = false;
  std::string stdio = "file";
  double stall_timeout_s = 60.0;
  std::string io_log;
  bool io_log_times = false;        // --io-log-times: each line also gives when and how long
  std::string io_level;             // "posix" or "mpiio"; empty: posix for threads, mpiio (MPI_File_*) with --mpi
  bool mpi = false;                 // --mpi: under mpirun, real MPI processes (mpi_mode.hpp)
  std::string timeline, html;       // report/: what a person looks at
  uint64_t max_events = 1'000'000;  // --timeline-max-events
  bool quiet = false;               // no progress bar
  std::string bind = "auto";        // --bind (bind.hpp)
  std::vector<std::string> hints;   // --hint KEY=VALUE (--mpi: mpi_hints.hpp)
};

// MPI-IO hints in the order given: (key, value).
using Hints = std::vector<std::pair<std::string, std::string>>;

// --hint KEY=VALUE as given; throws ToolError for a malformed one, and for
// hints where no MPI_File_open is made (without --mpi, or --io-level posix).
Hints parse_hints(const CliOptions& cli);

void add_options(CLI::App& app, CliOptions& cli);

// PLAN as given: a directory holds plan.mpior; anything else is the file.
std::string plan_file_of(const std::string& plan);

// --threads must match the plan: another scale is a job for extrapolation.
void check_thread_count(int64_t requested, const trace::Plan& plan);

ReplayOptions to_replay_options(const CliOptions& cli, const std::string& plan_file);

}  // namespace mpior::replay
