// The size every replayed file must end at, as the plan's calls imply it,
// checked against the target after the replay: a replay whose files end
// elsewhere (a write lost to a truncation that ran late, a file the target
// left short) did not do what the traced run did, and says so.
//
// Each replay thread logs the calls it replayed that change a file's size: a
// truncation sets it (an unlink sets it to -1, absent), a write, create or
// allocation grows it to at least a size. The file's final size is the last
// setting's, grown by every growth after it. Which came last between threads
// is known from the synchronisations between them (the MPI-IO collectives
// that synchronise after their work, counted per file: syncs_after), from
// the traced times where they are exact (lossless timing, clocks aligned),
// or from the full collectives on MPI_COMM_WORLD all threads passed alike,
// and within a thread from its order; where none tells, the size is only
// bounded, and the check is that the file lies within the bounds.
#pragma once

#include <climits>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace/event.hpp"
#include "trace/model.hpp"

namespace mpior::replay {

struct Target;

class SizeLog {
 public:
  // One step of a file's size, or several of one thread merged: when it
  // happened (traced ns on the plan's aligned clock, the thread's order, the
  // file's synchronisations the thread had passed), and the size.
  struct Step {
    int64_t t0 = 0, t1 = 0;
    int64_t seq0 = 0, seq1 = 0;
    int64_t epoch0 = 0, epoch1 = 0;
    int64_t world0 = 0, world1 = 0;  // the world's full synchronisations the thread had passed
    int64_t size = 0;
  };
  struct File {
    bool unknown = false;  // something the log does not model touched it (rename, append, stdio, AIO...)
    bool has_set = false;
    Step set;                 // the thread's last setting
    std::vector<Step> grows;  // growths after it, later ones smaller (earlier smaller ones add nothing)
    int64_t epoch = 0;        // the file's synchronisations the thread passed
  };

  // `clock_ns`: the rank's start on the aligned clock; `exact_times`: its
  // stream keeps every event's time (lossless).
  SizeLog(int64_t clock_ns = 0, bool exact_times = false) : clock_ns_(clock_ns), exact_(exact_times) {}

  // A POSIX call replayed (traced_ok: it succeeded when traced); g, g2: its
  // global file ids (g2: the second name of rename, link, copy), -1 when none.
  void posix(const trace::Event& ev, bool traced_ok, int32_t g, int32_t g2);
  // An MPI-IO call replayed at its own level (--io-level mpiio, or MPI mode
  // through MPI_File_*).
  void mpiio(const trace::Event& ev, int32_t g);
  // The ranks met at the end of a call on g that synchronises (syncs_after).
  void synced(int32_t g);
  // The thread passed a collective on MPI_COMM_WORLD that no member leaves
  // before all arrived (Barrier, Allreduce, Allgather, Alltoall...).
  void world_synced() { ++world_; }
  int64_t world() const { return world_; }

  void set(int32_t g, const trace::Event& ev, int64_t size);
  void grow(int32_t g, const trace::Event& ev, int64_t size);
  void unknown(int32_t g);

  bool exact_times() const { return exact_; }
  const std::unordered_map<int32_t, File>& files() const { return files_; }
  // MPI mode: a process's logs to integers and back.
  void append_to(std::vector<int64_t>& out) const;
  static SizeLog read_from(const int64_t*& p, const int64_t* end);

 private:
  File& at(int32_t g);
  Step step(const trace::Event& ev, const File& f, int64_t size);
  int64_t clock_ns_;
  bool exact_;
  int64_t seq_ = 0;
  int64_t world_ = 0;
  std::unordered_map<int32_t, File> files_;
  int32_t last_g_ = -1;
  File* last_ = nullptr;
  std::unordered_map<int64_t, bool> holes_;  // MPI-IO handle -> its view leaves gaps
};

inline constexpr int64_t kAnySize = INT64_MAX;  // no upper bound
struct SizeBounds {
  int64_t lower = -1, upper = -1;  // bytes; -1: the file is absent
};

// Bounds for every file some log changed and none made unknown (plan files
// that are directories or pseudo-files left out).
std::map<int32_t, SizeBounds> expected_sizes(const trace::Plan& plan, const std::vector<const SizeLog*>& logs);

struct SizeMismatch {
  std::string path;  // as traced
  SizeBounds want;
  int64_t got = -1;  // -1: absent
};
struct SizeCheck {
  int64_t checked = -1;  // files checked; -1: no check ran
  std::vector<SizeMismatch> mismatches;
};
SizeCheck check_final_sizes(const trace::Plan& plan, const Target& target, const std::vector<const SizeLog*>& logs);
std::string describe(const SizeMismatch& m);

}  // namespace mpior::replay
