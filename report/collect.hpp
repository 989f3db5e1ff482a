// Totals of the HTML report gathered event by event, for traced runs and
// replays alike: I/O volume per rank over time, access sizes, calls by kind,
// and per file the bytes, calls and the ranks that wrote or read it.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "report/event_view.hpp"
#include "report/html_report.hpp"
#include "trace/event.hpp"
#include "trace/model.hpp"

namespace mpior::report {

class ReportCollector {
 public:
  static constexpr size_t kBins = 60;
  static constexpr size_t kMaxRows = 64;

  ReportCollector(int32_t ranks, int64_t span_ns);
  // An event the application made (depth 0, or an AIO completion of its
  // own); start_ns from the job's common start, dur_ns its time.
  void add(int32_t rank, int64_t start_ns, int64_t dur_ns, const trace::Event& ev, const RankNames& names);
  // Calls the tracer counted but did not keep (online pruning).
  void add_pruned(const trace::KindTallies& pruned);
  // Fills the heatmap, sizes, ops, files and mpi of d.
  void fill(ReportData& d) const;

 private:
  struct FileUse {
    int64_t written = 0, read = 0;
    uint64_t ops = 0;
    std::set<int32_t> writers, readers, users;
  };
  struct KindUse {
    uint64_t calls = 0, pruned = 0;
    int64_t bytes = 0, time_ns = 0;
  };
  void add_volume(int32_t rank, int64_t start_ns, int64_t bytes);
  static std::string pattern(const FileUse& f, const std::set<int32_t>& own);

  int32_t ranks_;
  int64_t span_ns_;
  size_t per_row_;  // ranks per heatmap row
  std::vector<std::vector<double>> volume_;
  std::vector<double> read_sizes_, write_sizes_;
  std::map<std::string, FileUse> files_;
  std::map<trace::Kind, KindUse> kinds_;
};

// The loop structure of streams as text, cut after max_chars.
std::string loops_text(const std::vector<const trace::Stream*>& streams, const std::vector<std::string>& headers,
                       size_t max_chars = 64 * 1024);

}  // namespace mpior::report
