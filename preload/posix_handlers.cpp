// Recording hooks for POSIX file calls: fill the event's argument slots (see
// DEVELOPERS.md) and keep the fd table current. They run after the real call,
// inside the tracer guard.
#include <unistd.h>

#include "preload/fd_table.hpp"
#include "preload/shfp_capture.hpp"
#include "preload/signals.hpp"
#include "preload/wrapper_support.hpp"
#include "trace/arg_setters.hpp"

namespace mpior::preload {

using namespace trace;

namespace {

// The slots every call on a traced fd fills.
void fill_fd(Call& c, int64_t ret, int fd, const FdTable::Slot& slot) {
  auto& ev = c.ev();
  auto a = file_args_mut(ev);
  a.handle() = fd;
  a.file() = slot.file.load(std::memory_order_relaxed);
  ev.ret = ret;
  c.failed_if(ret < 0);
}

}  // namespace

void open_at(Call& c, int64_t ret, int dirfd, const char* path, int flags, int64_t mode) noexcept {
  if (__builtin_expect(t_state.signal_stash, 0))
    return defer_call(c, Deferred::open, {ret, {dirfd, flags, mode}, nullptr, path, nullptr});
  const AbsolutePath abs(dirfd, path);
  if (abs.empty() || is_excluded(abs.view())) {
    if (ret >= 0) fds().set(int(ret), kFdNotTraced, 0);
    return abs.empty() ? c.drop() : c.drop_excluded();
  }
  int32_t file = files().intern(abs.view(), flags);
  if (ret >= 0) fds().set(int(ret), file, 0);
  auto& ev = c.ev();
  auto a = file_args_mut(ev);
  a.handle() = ret;
  a.file() = file;
  a.flags() = flags;
  a.mode() = (flags & O_CREAT) ? mode : 0;
  ev.ret = ret;
  c.failed_if(ret < 0);
}

void close_before(Call& c, int fd) noexcept {
  if (__builtin_expect(t_state.signal_stash, 0)) return;  // the deferred close_fd looks, in the calls' order
  file_args_mut(c.ev()).file() = fds().file_of(fd);
  c.mark_looked_up();
}

void close_fd(Call& c, int64_t ret, int fd) noexcept {
  if (__builtin_expect(t_state.signal_stash, 0))
    return defer_call(c, Deferred::close, {ret, {fd}, nullptr, nullptr, nullptr});
  auto& ev = c.ev();
  int32_t file = c.looked_up() ? int32_t(file_args_mut(ev).file()) : fds().file_of(fd);
  fds().forget(fd);
  if (file < 0) return c.drop();
  aio_fd_closed(c, fd);
  auto a = file_args_mut(ev);
  a.handle() = fd;
  a.file() = file;
  ev.ret = ret;
  c.failed_if(ret < 0);
}

void shfp_observe(int fd, int32_t file, int64_t count, int64_t offset, int64_t ret) noexcept {
  if (t_shfp.got || count != 8 || offset != 0 || ret < 0) return;
  try {
    if (files().path(file).find(".shfp.") == std::string::npos) return;
  } catch (...) {
    return;
  }
  int64_t v = 0;  // a new (empty) pointer file reads as 0, as ROMIO takes it
  if (ret == 8 && ::pread(fd, &v, 8, 0) != 8) return;
  t_shfp.value = v;
  t_shfp.got = 1;
}

void fd_seek(Call& c, int64_t ret, int fd, int64_t offset, int whence) noexcept {
  if (__builtin_expect(t_state.signal_stash, 0))
    return defer_call(c, Deferred::fd_seek, {ret, {fd, offset, whence}, nullptr, nullptr, nullptr});
  FdTable::Slot* slot = fds().traced(fd);
  if (!slot) return c.drop();
  if (ret >= 0) slot->pos.store(ret, std::memory_order_relaxed);
  fill_fd(c, ret, fd, *slot);
  auto a = file_args_mut(c.ev());
  a.offset() = offset;
  a.flags() = whence;
}

void fd_plain(Call& c, int64_t ret, int fd) noexcept {
  FdTable::Slot* slot = fds().traced(fd);
  if (!slot) return c.drop();
  fill_fd(c, ret, fd, *slot);
}

void fd_truncate(Call& c, int64_t ret, int fd, int64_t length) noexcept {
  fd_plain(c, ret, fd);
  file_args_mut(c.ev()).offset() = length;
}

void dup_fd(Call& c, int64_t ret, int oldfd, int flags) noexcept {
  FdTable::Slot* slot = fds().traced(oldfd);
  if (!slot) {
    if (ret >= 0) fds().set(int(ret), kFdNotTraced, 0);  // dup2 over a traced fd closes it
    return c.drop();
  }
  if (ret >= 0) fds().copy(oldfd, int(ret));
  fill_fd(c, ret, oldfd, *slot);
  auto a = file_args_mut(c.ev());
  a.handle2() = ret;
  a.flags() = flags;
}

// Only the F_DUPFD forms change which fds name a file; other commands pass
// through unrecorded.
void fcntl_fd(Call& c, int64_t ret, int fd, int cmd, long arg) noexcept {
  if (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC) return c.drop();
  dup_fd(c, ret, fd, cmd);
  file_args_mut(c.ev()).mode() = arg;
}

void path_op(Call& c, int64_t ret, int dirfd, const char* path, int64_t mode) noexcept {
  const AbsolutePath abs(dirfd, path);
  if (abs.empty()) return c.drop();
  if (is_excluded(abs.view())) return c.drop_excluded();
  auto& ev = c.ev();
  auto a = file_args_mut(ev);
  a.file() = files().intern(abs.view(), -1);
  a.mode() = mode;
  ev.ret = ret;
  c.failed_if(ret < 0);
}

void dir_made(Call& c, char* ret, const char* tmpl) noexcept { path_op(c, ret ? 0 : -1, AT_FDCWD, tmpl, 0700); }

void path_stat(Call& c, int64_t ret, int dirfd, const char* path, int flags) noexcept {
  path_op(c, ret, dirfd, path, 0);
  file_args_mut(c.ev()).flags() = flags;
}

// posix_fallocate reports failure in its return value, not errno.
void fd_allocate(Call& c, int64_t ret, int fd, int64_t offset, int64_t len, int64_t mode) noexcept {
  FdTable::Slot* slot = fds().traced(fd);
  if (!slot) return c.drop();
  fill_fd(c, ret, fd, *slot);
  auto& ev = c.ev();
  auto a = file_args_mut(ev);
  a.offset() = offset;
  a.count() = len;
  a.mode() = mode;
  if (mode == expr::kPosixAllocate) ev.err = int32_t(ret);
}

void fd_range(Call& c, int64_t ret, int fd, int64_t offset, int64_t len, int64_t flags) noexcept {
  fd_plain(c, ret, fd);
  auto a = file_args_mut(c.ev());
  a.offset() = offset;
  a.count() = len;
  a.flags() = flags;
}

void fd_advise(Call& c, int64_t ret, int fd, int64_t offset, int64_t len, int64_t advice) noexcept {
  fd_range(c, ret, fd, offset, len, advice);
  if (advice != expr::kReadahead) c.ev().err = int32_t(ret);  // posix_fadvise returns the errno
}

namespace {

// One end of an in-kernel copy: the offset it started at (an offset argument
// the call advanced, or the fd's position, which it moved) and whether it was
// explicit.
int32_t copy_end(int fd, int64_t* off, int64_t done, int64_t& start, bool& positional) {
  FdTable::Slot* slot = fds().traced(fd);
  positional = off != nullptr;
  start = -1;
  if (!slot) return -1;
  if (off) {
    start = *off - std::max<int64_t>(done, 0);
  } else {
    start = slot->pos.load(std::memory_order_relaxed);
    if (done > 0) slot->pos.store(start + done, std::memory_order_relaxed);
  }
  return slot->file.load(std::memory_order_relaxed);
}

}  // namespace

// copy_file_range, sendfile, splice: a read of the in end and a write of the
// out end; an end that is not a traced file (socket, pipe) has file -1.
void fd_copy(Call& c, int64_t ret, int fd_in, int64_t* off_in, int fd_out, int64_t* off_out) noexcept {
  int64_t in_start, out_start;
  bool in_pos, out_pos;
  int32_t in = copy_end(fd_in, off_in, ret, in_start, in_pos);
  int32_t out = copy_end(fd_out, off_out, ret, out_start, out_pos);
  if (in < 0 && out < 0) return c.drop();
  auto& ev = c.ev();
  auto a = file_args_mut(ev);
  a.handle() = fd_in;
  a.file() = in;
  a.offset() = in_start;
  a.handle2() = fd_out;
  a.file2() = out;
  a.offset2() = out_start;
  a.flags() = (in_pos ? trace::kCopyInPositional : 0) | (out_pos ? trace::kCopyOutPositional : 0);
  ev.ret = ret;
  c.failed_if(ret < 0);
}

void path_truncate(Call& c, int64_t ret, const char* path, int64_t length) noexcept {
  path_op(c, ret, AT_FDCWD, path, 0);
  auto a = file_args_mut(c.ev());
  a.handle() = -1;
  a.offset() = length;
}

}  // namespace mpior::preload
