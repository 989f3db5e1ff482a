// Recording hooks for POSIX file calls: fill the event's argument slots (see
// DEVELOPERS.md) and keep the fd table current. They run after the real call,
// inside the tracer guard.
#include "files.hpp"
#include "wrapper_support.hpp"

namespace mpior::preload {

using namespace trace;

namespace {

// The slots every call on a traced fd fills.
void fill_fd(Call& c, int64_t ret, int fd, const FdTable::Slot& slot) {
  auto& ev = c.ev();
  ev.args[arg::handle] = fd;
  ev.args[arg::file] = slot.file.load(std::memory_order_relaxed);
  ev.ret = ret;
  c.failed_if(ret < 0);
}

}  // namespace

void open_at(Call& c, int64_t ret, int dirfd, const char* path, int flags, int64_t mode) noexcept {
  std::string abs = absolute_path(dirfd, path);
  if (abs.empty() || is_excluded(abs)) {
    if (ret >= 0) fds().set(int(ret), kFdNotTraced, 0);
    return c.drop();
  }
  int32_t file = files().intern(abs, flags);
  if (ret >= 0) fds().set(int(ret), file, 0);
  auto& ev = c.ev();
  ev.args[arg::handle] = ret;
  ev.args[arg::file] = file;
  ev.args[arg::flags] = flags;
  ev.args[arg::mode] = (flags & O_CREAT) ? mode : 0;
  ev.ret = ret;
  c.failed_if(ret < 0);
}

void close_fd(Call& c, int64_t ret, int fd) noexcept {
  int32_t file = fds().file_of(fd);
  fds().forget(fd);
  if (file < 0) return c.drop();
  auto& ev = c.ev();
  ev.args[arg::handle] = fd;
  ev.args[arg::file] = file;
  ev.ret = ret;
  c.failed_if(ret < 0);
}

void fd_io(Call& c, int64_t ret, int fd, int64_t count, int64_t offset) noexcept {
  FdTable::Slot* slot = fds().traced(fd);
  if (!slot) return c.drop();
  if (offset == expr::kAtCursor) {
    offset = slot->pos.load(std::memory_order_relaxed);
    if (ret > 0) slot->pos.store(offset + ret, std::memory_order_relaxed);
  }
  fill_fd(c, ret, fd, *slot);
  c.ev().args[arg::offset] = offset;
  c.ev().args[arg::count] = count;
}

void fd_seek(Call& c, int64_t ret, int fd, int64_t offset, int whence) noexcept {
  FdTable::Slot* slot = fds().traced(fd);
  if (!slot) return c.drop();
  if (ret >= 0) slot->pos.store(ret, std::memory_order_relaxed);
  fill_fd(c, ret, fd, *slot);
  c.ev().args[arg::offset] = offset;
  c.ev().args[arg::flags] = whence;
}

void fd_plain(Call& c, int64_t ret, int fd) noexcept {
  FdTable::Slot* slot = fds().traced(fd);
  if (!slot) return c.drop();
  fill_fd(c, ret, fd, *slot);
}

void fd_truncate(Call& c, int64_t ret, int fd, int64_t length) noexcept {
  fd_plain(c, ret, fd);
  c.ev().args[arg::offset] = length;
}

void dup_fd(Call& c, int64_t ret, int oldfd, int flags) noexcept {
  FdTable::Slot* slot = fds().traced(oldfd);
  if (!slot) {
    if (ret >= 0) fds().set(int(ret), kFdNotTraced, 0);  // dup2 over a traced fd closes it
    return c.drop();
  }
  if (ret >= 0) fds().copy(oldfd, int(ret));
  fill_fd(c, ret, oldfd, *slot);
  c.ev().args[arg::handle2] = ret;
  c.ev().args[arg::flags] = flags;
}

// Only the F_DUPFD forms change which fds name a file; other commands pass
// through unrecorded.
void fcntl_fd(Call& c, int64_t ret, int fd, int cmd, long arg) noexcept {
  if (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC) return c.drop();
  dup_fd(c, ret, fd, cmd);
  c.ev().args[arg::mode] = arg;
}

void path_op(Call& c, int64_t ret, int dirfd, const char* path, int64_t mode) noexcept {
  std::string abs = absolute_path(dirfd, path);
  if (abs.empty() || is_excluded(abs)) return c.drop();
  auto& ev = c.ev();
  ev.args[arg::file] = files().intern(abs, -1);
  ev.args[arg::mode] = mode;
  ev.ret = ret;
  c.failed_if(ret < 0);
}

void rename_path(Call& c, int64_t ret, const char* oldpath, const char* newpath) noexcept {
  std::string from = absolute_path(AT_FDCWD, oldpath), to = absolute_path(AT_FDCWD, newpath);
  if (from.empty() || to.empty() || (is_excluded(from) && is_excluded(to))) return c.drop();
  auto& ev = c.ev();
  ev.args[arg::file] = files().intern(from, -1);
  ev.args[arg::file2] = files().intern(to, -1);
  ev.ret = ret;
  c.failed_if(ret < 0);
}

}  // namespace mpior::preload
