// The self-contained HTML report (no network, no script): what one run did,
// from a trace directory (mpior-post --html) or a replay (mpior-replay
// --html). The adapters fill ReportData; render_html lays it out with inline
// SVG plots. Every text is escaped (text_escape).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mpior::report {

struct ReportData {
  std::string title;
  std::vector<std::pair<std::string, std::string>> job;  // key, value
  // I/O volume per rank over time: volume[row][bin] bytes; rows are ranks or
  // groups of ranks (row_labels).
  std::vector<std::string> row_labels;
  std::vector<std::vector<double>> volume;
  int64_t span_ns = 0;  // the time the bins cover
  struct Op {
    std::string name;
    uint64_t calls = 0, pruned = 0;
    int64_t bytes = 0;
    double time_s = 0;
  };
  std::vector<Op> ops;  // by call
  // Access sizes of reads and writes: bin i counts sizes in [2^(i-1), 2^i), bin 0 size 0.
  std::vector<double> read_sizes, write_sizes;
  struct File {
    std::string path;
    int64_t written = 0, read = 0;
    uint64_t ops = 0;
    int32_t ranks = 0;
    std::string pattern;  // N-to-N, N-to-1, shared read, one rank
  };
  std::vector<File> files;
  struct Mpi {
    std::string name;
    uint64_t logged = 0, pruned = 0;
  };
  std::vector<Mpi> mpi;
  std::string loops;  // the loop structure as text
  // A replay: traced against replayed time per rank (seconds).
  struct RankTime {
    int32_t rank = 0;
    double traced_s = 0, replay_s = 0;
  };
  std::vector<RankTime> replay;
};

// Section ids, in order: job, heatmap, ops, sizes, files, mpi, loops (and
// replay for a replay). The tests look for each.
std::string render_html(const ReportData& d);

// Access-size bin of a transfer and its label ("4 KiB–8 KiB").
size_t size_bin(int64_t bytes);
std::string size_bin_label(size_t bin);

// Writes the page; false when it could not be written.
bool write_file(const std::string& path, const std::string& text);

}  // namespace mpior::report
