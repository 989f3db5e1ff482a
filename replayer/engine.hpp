// The replay itself: one thread per (rank, traced thread), small stacks, all
// released together; each walks its stream with an EventCursor, sleeping the
// compute gaps, reissuing I/O and turning MPI into synchronisation.
#pragma once

#include <cstddef>
#include <string>

#include "replayer/backend.hpp"
#include "replayer/bind.hpp"
#include "replayer/replay_report.hpp"
#include "replayer/setup.hpp"
#include "trace/cursor.hpp"
#include "trace/model.hpp"

namespace mpior::replay {

struct ReplayOptions {
  SetupOptions setup;
  trace::CursorOptions cursor;          // mean or sampled timing of statistical streams
  double compute_scale = 1.0;           // multiplies every compute gap
  bool io_only = false;                 // no compute gaps, MPI calls only wait for their partners
  double stall_timeout_s = 60.0;        // no thread able to proceed for this long: stop
  size_t stack_bytes = 64 * 1024;       // per replay thread
  std::string plan_name;                // for the report
  std::string io_log;                   // file listing every replayed file call, when set
  bool io_log_times = false;            // io_log's lines also give each call's start and durations
  bool mpiio_level = false;             // --io-level mpiio: MPI-IO calls as positioned I/O on their views
  bool progress = false;                // a progress bar on stderr (report/progress.hpp)
  uint64_t record_calls = 0;            // > 0: keep up to this many calls (shared by the threads) in Report::calls
  Backend* backend = nullptr;           // --mpi: real MPI processes (this one replays some ranks); null: threads alone
  BindMode bind = BindMode::as_traced;  // --bind
};

// Throws ToolError for a plan the replay cannot use (ranks out of range) and
// for problems of the target; and, after stopping every thread, when the
// replay stalled or the target file system failed under it.
Report replay_plan(const trace::Plan& plan, const ReplayOptions& opt);

// The plan's inconsistencies that would make a replay meaningless; throws
// ToolError naming `name` (the plan file).
void validate_plan(const trace::Plan& plan, const std::string& name);

}  // namespace mpior::replay
