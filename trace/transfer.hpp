// The bytes an event moved between the program and a file, counted the same
// way by every consumer (summary, file sizes the replay needs, checks).
#pragma once

#include <cstdint>
#include <set>
#include <utility>

#include "trace/arg_views.hpp"
#include "trace/event.hpp"

namespace mpior::trace {

struct Transfer {
  int file_slot = arg::file;  // argument slot naming the file (file or file2)
  int64_t offset = -1;        // where it started, -1 unknown (file position)
  int64_t bytes = 0;
  bool write = false;
  bool mapped = false;  // through a memory mapping: an upper bound
  bool stdio = false;   // through a stdio stream (the kernel sees it at flush)
};

// Fills out (at most two: a copy has a read end and a write end) with what
// ev moved; returns how many. Failed calls move nothing.
int transfers(const Event& ev, Transfer out[2]);

// Whether ev stands for a call the application made itself (depth 0; an AIO
// completion when its submit was the application's), as opposed to calls a
// library made inside another intercepted call.
bool app_level(const Event& ev);

// An application's collective MPI-IO read or write that moves data: the
// calls whose POSIX transfers the MPI-IO layer deals to its aggregators (a
// split collective's _end only completes its _begin; _ordered calls move
// their data independently, in rank order).
inline bool collective_transfer(const Event& ev) {
  if (ev.depth != 0 || !is_mpiio(ev.kind)) return false;
  if (ev.op() != OpClass::mpiio_write && ev.op() != OpClass::mpiio_read) return false;
  int64_t flags = mpiio_args(ev).flags();
  return (flags & fio::kColl) && !(flags & (fio::kEnd | fio::kOrdered));
}

// Whose bytes an I/O event moved, for per-file counts. `app`: the
// application's own calls (app_level). `mpiio`: the POSIX calls ROMIO made
// under the application's MPI_File_* calls, and the AIO completions of
// requests submitted there (ROMIO's MPI_File_iwrite_at uses aio_write): they
// are what the file system saw of the application's MPI-IO, counted with the
// application's bytes. `nested`: every other call a library made inside an
// intercepted call. Each transfer belongs to exactly one level.
enum class Level : uint8_t { app, mpiio, nested };

// Classifies the events of a rank's streams, each stream read in call order.
class LevelTracker {
 public:
  Level observe(int32_t rank, const Event& ev);

 private:
  bool under_mpiio_ = false;                         // the last depth-0 call was an MPI_File_* call
  std::set<std::pair<int32_t, int64_t>> mpiio_aio_;  // (rank, request) submitted under one
};

}  // namespace mpior::trace
