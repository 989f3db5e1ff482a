// The process's view of files: the file table (paths, numbered in order of
// first use), which fd refers to which file and where its position is, which
// stdio stream is which, and which paths are not traced.
#pragma once

#include <stdio.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "preload/hot_data.hpp"
#include "trace/model.hpp"

namespace mpior::preload {

class Call;

inline constexpr int32_t kFdUnknown = -2;    // not seen yet: classified on first use
inline constexpr int32_t kFdNotTraced = -1;  // socket, pipe, excluded path

class FileTable {
 public:
  FileTable();
  // Index of the path, adding it on first use. Paths are absolute.
  int32_t intern(std::string_view path, int64_t flags);
  std::string path(int32_t index);
  std::vector<trace::FileEntry> entries();

 private:
  std::mutex mutex_;
  std::deque<trace::FileEntry> entries_;
  // Keys view entries_' paths: a lookup allocates nothing, and each path
  // is kept once. A deque keeps them where they are as it grows.
  std::unordered_map<std::string_view, int32_t> index_;
  const uint64_t serial_;  // which table a thread's last interned path is of
};

// Lock-free on the hot path: one slot per fd number below kMaxFd.
class FdTable {
 public:
  static constexpr int kMaxFd = 1 << 16;
  struct Slot {
    std::atomic<int32_t> file{kFdUnknown};
    std::atomic<int64_t> pos{0};
  };
  // The fd's slot, classifying an fd first seen here (fstat, /proc/self/fd).
  // nullptr when the fd is not traced or out of range.
  Slot* traced(int fd) {
    if (fd < 0 || fd >= kMaxFd) return nullptr;
    Slot& s = slots_[fd];
    if (__builtin_expect(s.file.load(std::memory_order_relaxed) >= 0, 1)) return &s;
    return classify(fd);
  }
  void set(int fd, int32_t file, int64_t pos);
  void forget(int fd);  // closed: whatever gets the number next is classified again
  void copy(int from, int to);
  int32_t file_of(int fd);
  // A rename: fds on file `from` now name `to` (bytes go under the name the
  // file has when they move).
  void rename_file(int32_t from, int32_t to);

 private:
  void note(int fd);
  std::atomic<int> high_{0};  // one past the highest fd ever set
  // traced() of an fd not seen yet (or not traced): out of the inline path.
  Slot* classify(int fd);
  Slot slots_[kMaxFd];
};

// FILE* -> stream id, file and position; open addressing with lock-free reads.
class StreamTable {
 public:
  struct Entry {
    std::atomic<FILE*> key{nullptr};
    int32_t id = 0;
    int32_t file = 0;
    int fd = -1;
    std::atomic<int64_t> pos{0};
  };
  // The stream's entry, registering a stream first seen here when its fd is a
  // traced file; nullptr when not traced. Inline for a stream in its home
  // slot (most are): every stdio call of the program asks.
  Entry* traced(FILE* f) {
    Entry& e = slots_[home(f)];
    if (__builtin_expect(f != nullptr && e.key.load(std::memory_order_acquire) == f, 1))
      return e.file >= 0 ? &e : nullptr;
    return traced_probe(f);
  }
  Entry* add(FILE* f, int32_t file, int fd, int64_t pos);
  Entry* add_with_id(FILE* f, int32_t id, int32_t file, int fd);
  void remove(FILE* f);
  void rename_file(int32_t from, int32_t to);

 private:
  static constexpr size_t kSlots = 4096;
  static size_t home(const FILE* f) { return (reinterpret_cast<uintptr_t>(f) >> 4) % kSlots; }
  Entry* traced_probe(FILE* f);  // traced() past the home slot
  Entry* find(FILE* f);
  std::mutex mutex_;
  std::atomic<int32_t> next_id_{3};
  Entry slots_[kSlots];
  // The slots ever given a stream, so a rename visits those, not the table
  // (a program renaming thousands of files, mdtest, made each rename scan it).
  uint16_t used_[kSlots];  // under mutex_
  size_t used_count_ = 0;
};

// Absolute, lexically normal form of path as seen from dirfd (AT_FDCWD: the
// working directory now).
std::string absolute_path(int dirfd, const char* path);
std::string lexically_normal(std::string_view path);

// absolute_path for a call's path, allocating only when it has to be
// built: most paths a program names are absolute and normal already, and
// those are viewed where the caller holds them (valid for the handler).
class AbsolutePath {
 public:
  AbsolutePath(int dirfd, const char* path);
  AbsolutePath(const AbsolutePath&) = delete;
  AbsolutePath& operator=(const AbsolutePath&) = delete;
  std::string_view view() const { return view_; }
  bool empty() const { return view_.empty(); }

 private:
  std::string built_;  // when path was relative or not normal
  std::string_view view_;
};

// Paths below these prefixes are not traced (MPIOR_EXCLUDE plus the trace
// directory itself).
void set_excluded(std::vector<std::string> prefixes);
bool is_excluded(std::string_view abs_path);

// open(2) flags equivalent to an fopen mode string.
int64_t flags_of_mode(const char* mode);

FileTable& files();
// The fd and stream tables, made at their first use; every file call asks
// for one, so the made table is one load away, without a call or a guard.
FdTable& make_fds();
StreamTable& make_streams();
MPIOR_HOT_EXTERN std::atomic<FdTable*> g_fds;
MPIOR_HOT_EXTERN std::atomic<StreamTable*> g_streams;
inline FdTable& fds() {
  FdTable* t = g_fds.load(std::memory_order_acquire);
  return __builtin_expect(t != nullptr, 1) ? *t : make_fds();
}
inline StreamTable& streams() {
  StreamTable* t = g_streams.load(std::memory_order_acquire);
  return __builtin_expect(t != nullptr, 1) ? *t : make_streams();
}

// Records the shared writable mappings of traced files still mapped
// (mmap_handlers.cpp; called at exit).
void map_record_live() noexcept;

// AIO requests the program never learned finished (aio_handlers.cpp): their
// completion is recorded at the close of their fd (nested under the close of
// c) or at exit.
void aio_fd_closed(Call& c, int fd) noexcept;
void aio_record_orphans() noexcept;

// Registers stdin, stdout and stderr as files 0, 1, 2 and streams 0, 1, 2.
void register_std_streams();

}  // namespace mpior::preload
