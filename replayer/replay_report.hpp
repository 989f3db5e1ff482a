// What a replay measured: total time against the traced time, per-thread
// times, per-operation counts, bytes and latencies, and the calls that failed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "replayer/final_sizes.hpp"
#include "trace/event.hpp"
#include "trace/kind.hpp"

namespace mpior::replay {

struct OpStats {
  uint64_t count = 0;
  uint64_t bytes = 0;
  int64_t total_ns = 0;
  int64_t max_ns = 0;
  void add(int64_t ns, int64_t moved) {
    ++count;
    bytes += uint64_t(std::max<int64_t>(moved, 0));
    total_ns += ns;
    max_ns = std::max(max_ns, ns);
  }
  void merge(const OpStats& o);
  double mean_us() const { return count ? double(total_ns) / double(count) / 1e3 : 0.0; }
};

// One replay thread's statistics by kind: a few kinds per thread, so a small
// vector rather than a table of every kind (thousands of threads).
class OpTable {
 public:
  // Every replayed call: the kind of the previous call first (runs of one kind).
  void add(trace::Kind k, int64_t ns, int64_t moved) {
    if (last_ < entries_.size() && entries_[last_].first == k) return entries_[last_].second.add(ns, moved);
    add_slow(k, ns, moved);
  }
  const std::vector<std::pair<trace::Kind, OpStats>>& entries() const { return entries_; }

 private:
  void add_slow(trace::Kind k, int64_t ns, int64_t moved);
  std::vector<std::pair<trace::Kind, OpStats>> entries_;
  size_t last_ = 0;
};

// Failed replayed calls, shared by every thread: a count and the first few messages.
class ErrorLog {
 public:
  static constexpr size_t kKept = 10;
  void add(std::string message);
  uint64_t count() const;
  std::vector<std::string> first() const;

 private:
  mutable std::mutex mu_;
  uint64_t count_ = 0;
  std::vector<std::string> first_;
};

struct ThreadSummary {
  int32_t rank = 0;
  uint32_t thread = 0;
  int64_t replay_ns = 0;
  int64_t traced_ns = 0;
  uint64_t events = 0;  // depth-0 events replayed
  // Where the replay's time went: compute gaps, I/O calls, communication
  // (the calibrated cost of MPI calls, start-up) and waiting for partners
  // (outside MPI-IO calls: their waits are I/O, as in the traced io_s).
  int64_t compute_ns = 0, io_ns = 0, comm_ns = 0, wait_ns = 0;
  int64_t charged_ns = 0;  // of comm_ns: the calibrated costs the replay slept (CommCosts), not MPI's own time
  // Every calibrated cost the replay applied, whole: slept (charged_ns), paid
  // against its lateness or spent in the hand-off past the partner's release.
  // The plan and the mode decide it; charged_ns varies with load. Floors of
  // calls without a cost class and start-up are not costs.
  int64_t costs_ns = 0;
  uint64_t costed_calls = 0;   // the calls those costs were applied to
  int64_t cpu_wait_ns = 0;     // the thread's own waits for a CPU (run queue), within the above
  int64_t sender_wait_ns = 0;  // of wait_ns: receives waiting for a late sender (MpiOps::sender_wait_ns)
  // Waits (collectives, receives) that slept past the poll, and how late they woke beyond
  // the charged cost (paid back from later gaps and costs).
  uint64_t slept_waits = 0;
  int64_t late_ns = 0;
  // The replay's own time around its reads and writes (the plan's event to
  // the call and back): debt that later gaps pay back.
  int64_t own_ns = 0;
  // The lateness left at the end, left out of replay_ns (set_lateness in sync.hpp).
  int64_t unpaid_ns = 0;
  // From the common start to MPI_Init's return, replayed and traced (0: no
  // MPI_Init replayed): start-up varies from launch to launch, the rest is
  // the application's.
  int64_t startup_ns = 0, traced_startup_ns = 0;
  // The same from the trace: gaps, I/O calls, MPI calls (their waiting included).
  int64_t traced_compute_ns = 0, traced_io_ns = 0, traced_mpi_ns = 0;
  // The CPUs the thread could run on (--bind): how many, and the first.
  int32_t cpus = 0, first_cpu = -1;
};

// --timeline / --html: what one replay thread did, call by call (depth 0,
// and the completion records of receives finished by a Wait/Test, depth 1),
// times from the common start; at most a budget of calls per thread.
struct ReplayedCall {
  trace::Event ev;
  int64_t start_ns = 0, end_ns = 0;
};
struct ThreadCalls {
  int32_t rank = 0;
  uint32_t thread = 0;
  std::vector<ReplayedCall> calls;
  bool capped = false;  // calls past the budget were left out
};

struct Report {
  std::string plan, fs;
  int32_t ranks = 0;
  size_t threads = 0;
  int64_t traced_ns = 0;     // longest traced rank, to the end of its last call
  int64_t cpu_wait_ns = 0;   // the ranks' waits for a CPU when traced (summed): not in their computation, not replayed
  int64_t replay_ns = 0;     // the predicted time: the longest thread's, less its unpaid lateness
  int64_t wall_ns = 0;       // release of the threads to the last one's end
  int64_t setup_ns = 0;      // start of the replay (target prepared, threads made) until every thread runs
  int64_t setup_cpu_ns = 0;  // the process's CPU time (all threads) in that while
  std::vector<ThreadSummary> per_thread;
  std::map<std::string, OpStats> ops;  // by kind name
  uint64_t errors = 0;
  std::vector<std::string> first_errors;
  uint64_t skipped = 0;  // calls that failed when traced, replayed as their duration
  std::vector<std::string> warnings;
  std::string placement;           // the threads' CPU placement (--bind), as decided
  std::vector<ThreadCalls> calls;  // per thread, when recorded (ReplayOptions::record_calls)
  nlohmann::json comm_costs;       // the calibration the replay charged (CommCosts::to_json)
  std::string io_log;              // --io-log: every replayed file call, per rank and thread
  SizeCheck sizes;                 // the replayed files' final sizes against the plan's

  double error_pct() const;
  // The slowest thread's time after its start-up, replayed and traced.
  int64_t after_startup_ns() const;
  int64_t traced_after_startup_ns() const;
};

void print_text(std::ostream& out, const Report& r);
// What to say on stderr, and exit non-zero for, when replayed files ended at
// other sizes than the plan says; empty when none did.
std::string size_failure(const Report& r);
nlohmann::json to_json(const Report& r);
// Throws ToolError naming the path when it cannot be written.
void write_io_log(const std::string& path, const std::string& text);
// Throws ToolError naming the path when it cannot be written.
void write_json(const std::string& path, const Report& r);

}  // namespace mpior::replay
