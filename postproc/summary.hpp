// Totals for summary.txt / summary.json: application calls only (depth 0;
// nested calls are the library's, completion records are not calls), time in
// I/O, MPI and compute per rank, per function and per file.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "postproc/scope.hpp"
#include "trace/event.hpp"
#include "trace/model.hpp"
#include "trace/transfer.hpp"

namespace mpior::postproc {

struct KindTotals {
  uint64_t calls = 0;     // kept and pruned
  uint64_t pruned = 0;    // of which left out of the trace by online pruning
  uint64_t excluded = 0;  // not in calls: calls naming an excluded path (MPIOR_EXCLUDE)
  int64_t time_ns = 0;
  int64_t bytes = 0;  // file calls: bytes done; MPI calls: bytes sent, received or contributed
};

struct RankTotals {
  int64_t io_ns = 0, mpi_ns = 0, traced_ns = 0;
  int64_t cpu_wait_ns = 0;  // waiting for a CPU, left out of the computation (MPIOR_STOLEN_CHECK_US)
  // Calls signal handlers made inside the tracer, counted but not recorded
  // (trace::RankTrace::unrecorded): what the rank's totals lack.
  uint64_t signal_unrecorded = 0;
  // Overlapping calls on several threads can exceed the traced wall time.
  int64_t compute_ns() const { return std::max<int64_t>(0, traced_ns - io_ns - mpi_ns - cpu_wait_ns); }
};

struct FileTotals {
  // POSIX level: the application's calls and the POSIX calls under its MPI-IO
  // calls (trace::Level app and mpiio), of which mapped_* through memory
  // mappings (upper bounds) and stdio_read through stdio streams.
  int64_t bytes_written = 0, bytes_read = 0;
  int64_t mapped_written = 0, mapped_read = 0;
  int64_t stdio_read = 0;
  int64_t nested_written = 0, nested_read = 0;  // by other calls libraries made inside intercepted calls
  uint64_t ops = 0;                             // application calls naming the file (MPI_File_* included)
  int64_t mpiio_written = 0, mpiio_read = 0;    // MPI-IO level: count x type size of successful calls
  uint64_t mpiio_ops = 0;                       // MPI_File_* calls naming the file
};

struct Summary {
  std::vector<RankTotals> ranks;
  std::vector<KindTotals> kinds;  // by trace::Kind; pruned calls included
  std::vector<FileTotals> files;  // by global file id
  uint64_t mpi_logged = 0;        // MPI calls in the streams (depth 0)
  uint64_t mpi_pruned = 0;        // MPI calls the tracer counted but did not keep
  bool pruning = false;           // some rank pruned online

  RankTotals total() const;
  // Adds o's totals (a collector that saw other events of the same plan).
  void add(const Summary& o);
  // Adds the totals of one rank's calls (o, whose files are the rank's local
  // file ids) once for each of ranks, who made the same calls: o.ranks[0] to
  // each rank's, each local file's to the file its rank's table names.
  void add_class(const Summary& o, const std::vector<int64_t>& ranks, const std::vector<trace::PlanRank>& tables);
};

class SummaryCollector {
 public:
  // Totals of ranks first_rank to first_rank + ranks - 1.
  SummaryCollector(size_t ranks, size_t files, int32_t first_rank = 0);
  // Traced time and the calls pruned online (counted, with their time, as the
  // application calls they were).
  void begin_rank(const RankScope& scope, const trace::RankTrace& trace);
  // The same from a plan: the rank's traced time; the calls pruned online
  // (counted per kind, their time in rank's MPI or I/O time when rank >= 0).
  void begin_rank(int32_t rank, int64_t traced_ns, int64_t cpu_wait_ns);
  void add_pruned(int32_t rank, bool pruning, const trace::KindTallies& pruned);
  void observe(const RankScope& scope, const trace::Event& ev, const EventPos& pos);
  Summary take() { return std::move(s_); }

 private:
  void observe_mpiio(const RankScope& scope, const trace::Event& ev, const EventPos& pos);
  void count_bytes(const RankScope& scope, const trace::Event& ev, const EventPos& pos, trace::Level level);
  RankTotals& rank(int32_t r) { return s_.ranks[size_t(r - first_rank_)]; }
  Summary s_;
  int32_t first_rank_;
  trace::LevelTracker levels_;
};

}  // namespace mpior::postproc
