// The in-job merge simulated in one process (issue 19): synthetic rank
// traces of an SPMD code (per rank: its own file N-to-N, a block of one
// shared file N-to-1, a block of its group's file, groups of 16; 50
// iterations with a barrier), reduced over a radix tree (merge_tree.hpp),
// generated rank by rank as the tree consumes them.
//   merge_tree_bench RANKS [RADIX=2] [nogroup: without the group files]
// prints: ranks radix levels steps critical_ms critical_median_ms total_ms peak_rss_mib
//         rank_stream_bytes merged_stream_bytes ratio merged_job_bytes
//         job_ratio (the streams in merged.mpior's form) streams
// critical_ms sums each level's slowest step (a job runs a level's steps in
// parallel), critical_median_ms each level's median step (the merge's own
// cost, without the noise the slowest of thousands of steps picks up);
// total_ms is every step one after the other. MERGE_TREE_DUMP=FILE
// writes the root's streams as a rank trace (mpior-post --dump FILE).
// MERGE_TREE_LEVELS=1 prints each level's median and slowest step on stderr.
#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "merge/merge_job.hpp"
#include "merge/merge_tree.hpp"
#include "trace/builder.hpp"
#include "trace/format.hpp"

using namespace mpior;
using trace::Kind;
namespace arg = trace::arg;

namespace {

constexpr int64_t kBlock = 1 << 16;
constexpr int kIterations = 50, kGroup = 16;

// One call; `site` tells the program's call statements apart (as return
// addresses do).
void add(trace::StreamBuilder& b, int64_t& clock, uint64_t site, Kind kind,
         std::initializer_list<std::pair<int, int64_t>> args, int64_t ret, int64_t dur) {
  trace::RawEvent ev;
  ev.kind = kind;
  ev.callsite = 0x400000 + site * 16;
  clock += 2000;
  ev.start = clock;
  ev.end = clock += dur;
  ev.ret = ret;
  for (auto [slot, v] : args) ev.args[size_t(slot)] = v;
  b.append(ev);
}

std::vector<trace::Stream> rank_streams(int32_t r, int32_t size, bool group) {
  trace::StreamBuilder b;
  int64_t clock = 0;
  add(b, clock, 1, Kind::open, {{arg::handle, 3}, {arg::file, 3}, {arg::flags, O_CREAT | O_WRONLY}}, 3, 20000);
  add(b, clock, 2, Kind::open, {{arg::handle, 4}, {arg::file, 4}, {arg::flags, O_CREAT | O_WRONLY}}, 4, 20000);
  add(b, clock, 3, Kind::open, {{arg::handle, 5}, {arg::file, 5}, {arg::flags, O_CREAT | O_WRONLY}}, 5, 20000);
  for (int64_t i = 0; i < kIterations; ++i) {
    int64_t d = (r * 7 + i * 13) % 5000;
    add(b, clock, 4, Kind::pwrite, {{arg::handle, 3}, {arg::file, 3}, {arg::offset, i * kBlock}, {arg::count, kBlock}},
        kBlock, 300000 + d);
    add(b, clock, 5, Kind::pwrite,
        {{arg::handle, 4}, {arg::file, 4}, {arg::offset, (i * size + r) * kBlock}, {arg::count, kBlock}}, kBlock,
        300000 + d);
    if (group)
      add(b, clock, 6, Kind::pwrite,
          {{arg::handle, 5}, {arg::file, 5}, {arg::offset, (i * kGroup + r % kGroup) * kBlock}, {arg::count, kBlock}},
          kBlock, 300000 + d);
    add(b, clock, 7, Kind::MPI_Barrier, {{arg::coll_seq, i}}, 0, 5000 + d % 900);
  }
  for (int64_t fd : {3, 4, 5}) add(b, clock, 8, Kind::close, {{arg::handle, fd}, {arg::file, fd}}, 0, 9000);
  return {b.snapshot(r, 0)};
}

size_t stream_bytes(std::vector<trace::Stream> streams) {
  trace::RankTrace t;
  size_t empty = trace::encode(t).size();
  t.streams = std::move(streams);
  return trace::encode(t).size() - empty;
}

// The same streams in merged.mpior's form (compact timing statistics), as
// the tracer's last merge step leaves them, without the ranks' records.
size_t job_bytes(std::vector<trace::Stream> streams) {
  trace::MergedJob m;
  m.ranks.emplace_back();
  size_t empty = trace::encode(m).size();
  m.streams = std::move(streams);
  std::vector<trace::MergedJob> parts;
  parts.push_back(std::move(m));
  return trace::encode(merge::merge_jobs(std::move(parts))).size() - empty;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: merge_tree_bench RANKS [RADIX] [nogroup]\n");
    return 1;
  }
  int32_t size = std::atoi(argv[1]);
  size_t radix = argc > 2 ? size_t(std::atoi(argv[2])) : 2;
  bool group = argc <= 3 || std::string(argv[3]) != "nogroup";
  if (size < 1 || radix < 2) {
    fmt::print(stderr, "merge_tree_bench: RANKS >= 1, RADIX >= 2\n");
    return 1;
  }
  size_t one = stream_bytes(rank_streams(0, size, group));
  merge::TreeStats stats;
  std::vector<trace::Stream> root = merge::reduce_tree(
      size_t(size), [&](size_t i) { return rank_streams(int32_t(i), size, group); }, radix, &stats);
  double critical = 0;
  for (double s : stats.level_max_s) critical += s;
  // VmHWM, not ru_maxrss: the latter keeps the peak of the image before
  // execve (python's, under bench.py).
  double peak_kib = 0;
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "VmHWM: %lf kB", &peak_kib) == 1) break;
    std::fclose(f);
  }
  if (std::getenv("MERGE_TREE_LEVELS"))
    for (size_t l = 0; l < stats.level_steps_s.size(); ++l) {
      std::vector<double> v = stats.level_steps_s[l];
      std::sort(v.begin(), v.end());
      fmt::print(stderr, "level {} steps {} median_us {:.1f} max_us {:.1f}\n", l, v.size(), v[v.size() / 2] * 1e6,
                 v.back() * 1e6);
    }
  size_t streams = root.size();
  if (const char* dump = std::getenv("MERGE_TREE_DUMP")) {  // the root as a rank trace, for mpior-post --dump
    trace::RankTrace t;
    t.streams = root;
    trace::write_file_atomic(dump, trace::encode(t));
  }
  size_t job = job_bytes(root);
  size_t merged = stream_bytes(std::move(root));
  fmt::print(
      "ranks {} radix {} levels {} steps {} critical_ms {:.2f} critical_median_ms {:.3f} total_ms {:.2f} "
      "peak_rss_mib {:.1f} "
      "rank_stream_bytes {} merged_stream_bytes {} ratio {:.2f} merged_job_bytes {} job_ratio {:.2f} streams {} files "
      "{}\n",
      size, radix, stats.level_max_s.size(), stats.steps, critical * 1e3, stats.critical_median_s() * 1e3,
      stats.total_s * 1e3, peak_kib / 1024, one, merged, double(merged) / double(one), job, double(job) / double(one),
      streams, group ? "own+shared+group" : "own+shared");
  return 0;
}
