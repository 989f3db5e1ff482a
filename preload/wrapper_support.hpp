// What the generated wrappers (wrappers_*.cpp) need: system declarations, the
// real-symbol table, Call, and the file handlers with the helpers their
// argument expressions use.
#pragma once

#include <aio.h>
#include <dirent.h>
#include <fcntl.h>
#include <libaio.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "preload/call.hpp"
#include "preload/fd_table.hpp"
#include "preload/real_table.hpp"
#include "preload/shfp_capture.hpp"
#include "preload/signals.hpp"
#include "trace/arg_setters.hpp"

#define MPIOR_API __attribute__((visibility("default")))

namespace mpior::preload::check {
// A function pointer type without noexcept (glibc declares its functions
// noexcept in C++), to compare a list's declaration with the system header's.
template <typename T>
struct plain {
  using type = T;
};
template <typename R, typename... A>
struct plain<R (*)(A...) noexcept> {
  using type = R (*)(A...);
};
template <typename R, typename... A>
struct plain<R (*)(A..., ...) noexcept> {
  using type = R (*)(A..., ...);
};
template <typename Header, typename Listed>
inline constexpr bool same = std::is_same_v<typename plain<Header>::type, Listed>;
}  // namespace mpior::preload::check

namespace mpior::preload {

// A libc function the lists do not name (sigaction, syscall), resolved at
// its first use.
template <typename F>
F resolved_once(std::atomic<F>& slot, const char* symbol) noexcept {
  F f = slot.load(std::memory_order_relaxed);
  if (!f) {
    f = reinterpret_cast<F>(real::resolve(symbol));
    slot.store(f, std::memory_order_relaxed);
  }
  return f;
}

namespace expr {
// Offset argument of calls that use (and move) the file position.
inline constexpr int64_t kAtCursor = INT64_MIN;
// Byte count a call does not state (printf-style output: see its return value).
inline constexpr int64_t kUnknownCount = -1;

inline int64_t iov_bytes(const struct iovec* iov, int n) {
  int64_t total = 0;
  for (int i = 0; i < n; ++i) total += int64_t(iov[i].iov_len);
  return total;
}
inline int64_t text_bytes(const char* s) { return s ? int64_t(strlen(s)) : 0; }

// glibc's 64-bit AIO names take struct aiocb64, the same layout as struct aiocb.
inline const struct aiocb* as_aiocb(const struct aiocb64* cb) { return reinterpret_cast<const struct aiocb*>(cb); }
inline const struct aiocb* const* as_aiocbs(const struct aiocb64* const* list) {
  return reinterpret_cast<const struct aiocb* const*>(list);
}
using ::mpior::trace::kPosixAllocate;
using ::mpior::trace::kReadahead;
using ::mpior::trace::kSymlink;
// preadv2/pwritev2: offset -1 means the file position.
inline int64_t v2_offset(int64_t offset) { return offset == -1 ? kAtCursor : offset; }

using ::mpior::trace::kAioRead;
using ::mpior::trace::kAioSync;
using ::mpior::trace::kAioWrite;
}  // namespace expr

// posix
void open_at(Call& c, int64_t ret, int dirfd, const char* path, int flags, int64_t mode) noexcept;
// exec*: what the program had is written before the call (session.cpp);
// a failed exec is not recorded.
// Before exec and _exit. False in a vfork child (dash runs commands so):
// it shares the parent's memory, thread-locals included, and never returns
// from a successful exec, so the call is made untraced; recording it would
// leave the parent's call depth raised and every later call of the parent
// nested, out of its trace.
bool session_before_exec() noexcept;
bool session_before_exit() noexcept;
inline void not_recorded(Call& c, int64_t) noexcept { c.drop(); }
// Before close: the fd's file, looked up while the number is still this
// file's (once closed, a signal handler or another thread may reuse it
// before close_fd runs).
void close_before(Call& c, int fd) noexcept;
void close_fd(Call& c, int64_t ret, int fd) noexcept;
// Inline into the wrappers of reads and writes (below): the commonest calls.
inline void fd_io(Call& c, int64_t ret, int fd, int64_t count, int64_t offset) noexcept;
void fd_seek(Call& c, int64_t ret, int fd, int64_t offset, int whence) noexcept;
void fd_plain(Call& c, int64_t ret, int fd) noexcept;
void fd_truncate(Call& c, int64_t ret, int fd, int64_t length) noexcept;
void dup_fd(Call& c, int64_t ret, int oldfd, int flags) noexcept;
void fcntl_fd(Call& c, int64_t ret, int fd, int cmd, long arg) noexcept;
void path_op(Call& c, int64_t ret, int dirfd, const char* path, int64_t mode) noexcept;
// mkdtemp: a mkdir (0700) of the name it made in `tmpl`, or a failed one.
void dir_made(Call& c, char* ret, const char* tmpl) noexcept;
// fstatat and statx: path_op, with the AT_* flags (AT_SYMLINK_NOFOLLOW) in the flags slot.
void path_stat(Call& c, int64_t ret, int dirfd, const char* path, int flags) noexcept;
void fd_advise(Call& c, int64_t ret, int fd, int64_t offset, int64_t len, int64_t advice) noexcept;
void fd_allocate(Call& c, int64_t ret, int fd, int64_t offset, int64_t len, int64_t mode) noexcept;
void fd_range(Call& c, int64_t ret, int fd, int64_t offset, int64_t len, int64_t flags) noexcept;
void fd_copy(Call& c, int64_t ret, int fd_in, int64_t* off_in, int fd_out, int64_t* off_out) noexcept;
void path_truncate(Call& c, int64_t ret, const char* path, int64_t length) noexcept;
void path_flags(Call& c, int64_t ret, int dirfd, const char* path, int64_t flags) noexcept;
void rename_at(Call& c, int64_t ret, int olddir, const char* oldpath, int newdir, const char* newpath,
               int64_t flags) noexcept;
void link_at(Call& c, int64_t ret, int olddir, const char* oldpath, int newdir, const char* newpath,
             int64_t flags) noexcept;
void dir_open(Call& c, DIR* ret, int dirfd, const char* path) noexcept;
void dir_use(Call& c, const void* ret, DIR* dir, bool got) noexcept;
void dir_close(Call& c, int64_t ret, DIR* dir) noexcept;

// aio
void aio_submit(Call& c, int64_t ret, const struct aiocb* cb, int64_t op) noexcept;
void aio_list(Call& c, int64_t ret, int mode, const struct aiocb* const* list, int nent) noexcept;
void aio_error_of(Call& c, int64_t ret, const struct aiocb* cb) noexcept;
void aio_return_of(Call& c, int64_t ret, const struct aiocb* cb) noexcept;
void aio_wait(Call& c, int64_t ret, const struct aiocb* const* list, int nent) noexcept;
void aio_cancel_fd(Call& c, int64_t ret, int fd, const struct aiocb* cb) noexcept;

// libaio
void kaio_submit(Call& c, int64_t ret, io_context_t ctx, long nr, struct iocb** ios) noexcept;
void kaio_getevents(Call& c, int64_t ret, io_context_t ctx, const struct io_event* events) noexcept;
void kaio_cancel(Call& c, int64_t ret, io_context_t ctx, const struct iocb* cb, const struct io_event* evt) noexcept;
void kaio_destroy(Call& c, int64_t ret, io_context_t ctx) noexcept;

// mmap
void map_fd(Call& c, void* ret, size_t len, int prot, int flags, int fd, int64_t offset) noexcept;
void map_before_unmap(Call& c, void* addr, size_t len) noexcept;
void map_unmap(Call& c, int64_t ret, void* addr, size_t len) noexcept;
void map_before_sync(Call& c, void* addr, size_t len, int flags) noexcept;
void map_sync(Call& c, int64_t ret, void* addr, size_t len, int flags) noexcept;
void map_before_remap(Call& c, void* old, size_t old_len, size_t new_len, int flags, void* new_addr) noexcept;
void map_remap(Call& c, void* ret, void* old, size_t old_len, size_t new_len) noexcept;
// Stores in c's record which mappings exist before its unmapping or moving
// call (lock-free: ucm's event of a signal handler's call takes it too).
void map_capture(Call& c) noexcept;
// Before mmap, munmap and mremap (ucm_bridge.cpp): false when ucm's event for
// this very call records it (ucm called the wrapper as the original
// function), so the wrapper calls through unrecorded.
bool map_not_in_ucm_event() noexcept;
// A traced mapping exists (a munmap or mremap may concern one).
bool map_any() noexcept;

// stdio
void stream_open(Call& c, FILE* ret, const char* path, const char* mode) noexcept;
// tmpfile: an unnamed file in P_tmpdir, recorded as open(P_tmpdir, O_RDWR | O_TMPFILE).
void stream_tmpfile(Call& c, FILE* ret) noexcept;
void stream_fdopen(Call& c, FILE* ret, int fd, const char* mode) noexcept;
void stream_reopen(Call& c, FILE* ret, const char* path, const char* mode, FILE* old) noexcept;
void stream_close(Call& c, int64_t ret, FILE* stream) noexcept;
inline void stream_io(Call& c, int64_t ret, FILE* stream, int64_t count, int64_t bytes) noexcept;
void stream_plain(Call& c, int64_t ret, FILE* stream) noexcept;
void stream_scan(Call& c, int64_t ret, FILE* stream) noexcept;
void stream_seek(Call& c, int64_t ret, FILE* stream, int64_t offset, int whence) noexcept;
// fgets returns a pointer
inline void stream_io(Call& c, char* ret, FILE* stream, int64_t count, int64_t bytes) noexcept {
  stream_io(c, ret ? 1 : 0, stream, count, bytes);
}

// A read or write on an fd: its file, its offset (the fd's position moves
// for calls without one), the bytes asked for.
inline void fd_io(Call& c, int64_t ret, int fd, int64_t count, int64_t offset) noexcept {
  if (__builtin_expect(t_state.signal_stash, 0)) [[unlikely]]
    return defer_call(c, Deferred::fd_io, {ret, {fd, count, offset}, nullptr, nullptr, nullptr});
  FdTable::Slot* slot = fds().traced(fd);
  if (!slot) return c.drop();
  if (offset == expr::kAtCursor) {
    offset = slot->pos.load(std::memory_order_relaxed);
    if (ret > 0) slot->pos.store(offset + ret, std::memory_order_relaxed);
  }
  auto& ev = c.ev();
  auto a = trace::file_args_mut(ev);
  a.handle() = fd;
  a.file() = slot->file.load(std::memory_order_relaxed);
  a.offset() = offset;
  a.count() = count;
  ev.ret = ret;
  c.failed_if(ret < 0);
  if (__builtin_expect(t_shfp.armed, 0) && trace::info(ev.kind).op == trace::OpClass::read) [[unlikely]]
    return shfp_observe(fd, slot->file.load(std::memory_order_relaxed), count, offset, ret);
  c.mark_fast();
}

// A stdio read or write: the stream's position moves by the bytes it moved.
inline void stream_io(Call& c, int64_t ret, FILE* stream, int64_t count, int64_t bytes) noexcept {
  if (__builtin_expect(t_state.signal_stash, 0)) [[unlikely]]
    return defer_call(c, Deferred::stream_io, {ret, {count, bytes}, stream, nullptr, nullptr});
  StreamTable::Entry* e = streams().traced(stream);
  if (!e) return c.drop();
  const int64_t pos = e->pos.load(std::memory_order_relaxed);
  if (bytes > 0) e->pos.store(pos + bytes, std::memory_order_relaxed);
  auto& ev = c.ev();
  auto a = trace::file_args_mut(ev);
  a.handle() = e->id;
  a.file() = e->file;
  a.offset() = pos;
  a.count() = count;
  ev.ret = bytes < 0 ? 0 : bytes;
  c.failed_if(ret < 0 || (bytes <= 0 && count != 0));
  c.mark_fast();
}

}  // namespace mpior::preload
