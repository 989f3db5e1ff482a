// The plan's global file table: every path any rank named, numbered by first
// appearance (ranks in order, each rank's file table in order), with what the
// replayer must prepare: files the application creates, directories, and the
// bytes that must exist before replay.
#pragma once

#include <climits>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "postproc/scope.hpp"
#include "postproc/trace_set.hpp"
#include "trace/model.hpp"
#include "trace/transfer.hpp"

namespace mpior::postproc {

// What reads before a file's truncation show of its size before the run (a
// restart file read, then overwritten): bounds by rank, merged at finish_files.
// A collective every member waits for (barrier, allreduce, ...: blocking,
// trace::is_all_to_all) by global communicator and the tracer's number of it
// there, the same on every member: what orders two ranks' calls whatever
// their clocks (which leave out the time a rank waited for a CPU).
struct Meeting {
  int32_t comm = -1;
  int64_t seq = -1;
};
struct ReadBound {
  int64_t last_end_ns;  // the last such read's end, aligned clock
  int64_t extent;       // the furthest byte read
  Meeting next;         // the first meeting its thread made after that read (comm -1: none)
};
struct PreTruncation {
  int64_t first_ns = INT64_MAX;                    // the earliest truncation (aligned start) ...
  int32_t first_rank = -1;                         // ... and its rank
  std::unordered_map<int32_t, int64_t> first_met;  // ... and the last meeting per comm its thread left before it
  std::vector<ReadBound> reads;  // ranks' reads before their own truncation, if any (non-dominated bounds)
  std::vector<std::pair<int32_t, ReadBound>> own;  // those of ranks that truncated it later themselves
};
// The rank being scanned: its reads of a file until it truncates the file.
struct RankRead {
  int64_t extent = 0;
  int64_t last_end_ns = INT64_MIN;
  bool truncated = false;
  uint32_t stream = 0;         // the thread of the last read ...
  size_t meetings_before = 0;  // ... and how many meetings it had made by then
};

struct FileResolution {
  std::vector<trace::PlanFile> files;                 // by global id; <stdin>, <stdout>, <stderr> are 0, 1, 2
  std::vector<std::vector<int32_t>> local_to_global;  // per rank: file table index -> global id
  std::vector<bool> truncated;                        // by global id: the application emptied it (O_TRUNC)
  std::vector<bool> made_new;                         // by global id: an O_CREAT | O_EXCL open of it succeeded
  std::vector<int32_t> last_rank;                     // by global id: last rank seen using it (first-use test)
  std::vector<bool> named_by_app;                     // by global id: a depth-0 call (POSIX or MPI-IO) named it
  std::vector<bool> rank_found;                       // by global id: last_rank's first call on it found it
  std::vector<bool> found;                            // by global id: some rank's first call on it found it
  std::vector<bool> found_then_made;                  // by global id: a rank found it, then made it itself
  std::vector<PreTruncation> pre_truncation;          // by global id (files some rank read)
  std::unordered_map<int32_t, RankRead> rank_reads;   // the rank being scanned, by global id
  std::vector<std::vector<Meeting>> rank_meetings;    // the rank being scanned, per stream, in order
  bool clocks_aligned = true;                         // every rank ran under MPI (its clock aligned at MPI_Init)
};

FileResolution number_files(const TraceSet& set);

// Updates created / directory / initial_size from one event. Only calls the
// application made (depth 0) and the POSIX calls made under its MPI-IO calls
// count (level, from trace::LevelTracker): they are what the replayer reissues.
void note_file_use(FileResolution& files, const RankScope& scope, const trace::Event& ev, const EventPos& pos,
                   trace::Level level);
// Any MPI event of the rank being scanned: the meetings its threads made.
void note_meeting(FileResolution& files, const RankScope& scope, const trace::Event& ev, const EventPos& pos);
// After a rank's events: its reads before truncations join the files' bounds.
void end_rank_files(FileResolution& files, const RankScope& scope);
// After every event: which files existed before the run (found, and made by
// no rank, or found by a rank before it made it itself). A file the
// application truncated, or made new (an O_EXCL create that succeeded, where
// nothing had found it before), needs no bytes before replay (what it reads
// back, it wrote); the replay must not make it beforehand, where the
// exclusive create would fail.
void finish_files(FileResolution& files);

}  // namespace mpior::postproc
