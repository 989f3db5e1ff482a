// `--io-level mpiio`: each MPI-IO call replayed as independent positioned
// I/O on its flattened view (no collective buffering, no ROMIO), instead of
// the POSIX calls ROMIO made for it. One per replay thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "replayer/io_replay.hpp"
#include "trace/event.hpp"

namespace mpior::replay {

// An MPI-IO collective the MPI library completes with a synchronisation of
// its own after its file system work: ROMIO's set_size truncates on one rank
// then broadcasts, preallocate and delete-on-close end in a barrier, set_view
// resets the shared pointer then waits, sync, close, set_atomicity and an
// open that creates agree on the outcome. A rank must not go on before the
// others finished it: a write racing another rank's truncation is lost.
bool syncs_after(const trace::Event& ev);
// MPI_MODE_DELETE_ON_CLOSE in a traced amode: the same value under MPICH and
// Open MPI.
inline constexpr int64_t kTracedDeleteOnClose = 16;

// Shared file pointers (_shared, _ordered, seek_shared), in bytes past the
// view's displacement: per global file, shared by every replay thread.
class SharedPointers {
 public:
  // `views`: how many views the rank set on the file since it opened it.
  // MPI_File_set_view resets the shared pointer to zero, and is collective,
  // so a rank thread that runs ahead into the next view takes the next
  // view's pointer, not the one the others still use.
  int64_t fetch_add(int32_t file, int64_t bytes, uint32_t views);
  void set(int32_t file, int64_t at, uint32_t views);

 private:
  static uint64_t key(int32_t file, uint32_t views) { return uint64_t(uint32_t(file)) << 32 | views; }
  std::mutex mu_;
  std::unordered_map<uint64_t, int64_t> next_;
};

class MpiioReplay {
 public:
  MpiioReplay(IoReplay& io, const Target& target, SharedPointers& shared) : io_(io), target_(target), shared_(shared) {}
  ~MpiioReplay();
  MpiioReplay(const MpiioReplay&) = delete;
  MpiioReplay& operator=(const MpiioReplay&) = delete;

  // A depth-0 MPI-IO event; the bytes it moved.
  int64_t replay(const trace::Event& ev);
  // An mpior_block record under the last MPI_File_set_view.
  void block(const trace::Event& ev);

 private:
  struct View {
    int64_t disp = 0, extent = 0, etype = 1;
    std::vector<std::pair<int64_t, int64_t>> blocks;  // (offset, length) within one filetype
  };
  struct Handle {
    int fd = -1;
    View view;
    uint32_t views = 0;  // views set since the open (SharedPointers)
  };
  void open(const trace::Event& ev);
  void remove(const trace::Event& ev);
  int resize(const trace::Event& ev, const Handle& h);
  int64_t transfer(const trace::Event& ev, Handle& h, int64_t at, int64_t bytes);
  int64_t piece(const trace::Event& ev, int fd, bool write, int64_t at, int64_t n);

  IoReplay& io_;
  const Target& target_;
  SharedPointers& shared_;
  std::unordered_map<int64_t, Handle> handles_;
  int64_t view_handle_ = -1;
};

}  // namespace mpior::replay
