// The plan's global file table: every path any rank named, numbered by first
// appearance (ranks in order, each rank's file table in order), with what the
// replayer must prepare: files the application creates, directories, and the
// bytes that must exist before replay.
#pragma once

#include <cstdint>
#include <vector>

#include "model.hpp"
#include "scope.hpp"
#include "trace_set.hpp"
#include "transfer.hpp"

namespace mpior::postproc {

// The earliest call that found a file (succeeded without creating it) and the
// earliest that made it, on aligned clocks: a file found before anything made
// it was there before the run, even if the run removed and made it again.
struct FileOrder {
  int64_t found_ns = INT64_MAX;
  int32_t found_rank = -1;
  int64_t made_ns = INT64_MAX;
  int32_t made_rank = -1;
};

struct FileResolution {
  std::vector<trace::PlanFile> files;                 // by global id; <stdin>, <stdout>, <stderr> are 0, 1, 2
  std::vector<std::vector<int32_t>> local_to_global;  // per rank: file table index -> global id
  std::vector<bool> truncated;                        // by global id: the application emptied it (O_TRUNC)
  std::vector<bool> made_new;                         // by global id: an O_CREAT | O_EXCL open of it succeeded
  std::vector<int32_t> last_rank;                     // by global id: last rank seen using it (first-use test)
  std::vector<bool> named_by_app;                     // by global id: a depth-0 call (POSIX or MPI-IO) named it
  std::vector<FileOrder> order;                       // by global id: when it was first found, first made
  bool clocks_aligned = true;                         // every rank's clock is on rank 0's (all called MPI_Init)
};

FileResolution number_files(const TraceSet& set);

// Updates created / directory / initial_size from one event. Only calls the
// application made (depth 0) and the POSIX calls made under its MPI-IO calls
// count (level, from trace::LevelTracker): they are what the replayer reissues.
void note_file_use(FileResolution& files, const RankScope& scope, const trace::Event& ev, const EventPos& pos,
                   trace::Level level);
// After every event: which files existed before the run (found before made;
// across ranks only when the clocks are aligned and the order is clear).
// A file the application truncated, or made new (an
// O_EXCL create that succeeded, where nothing had found it before), needs no
// bytes before replay (what it reads back, it wrote); the replay must not
// make it beforehand, where the exclusive create would fail.
void finish_files(FileResolution& files);

}  // namespace mpior::postproc
