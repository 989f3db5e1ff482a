// IoReplay's calls on descriptors and paths: opens, closes, reads and
// writes, dup and the lookups that name a second path.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "replayer/io_replay.hpp"
#include "replayer/io_replay_ops.hpp"
#include "replayer/pacing_clock.hpp"
#include "trace/arg_views.hpp"

namespace mpior::replay {
namespace {

using io_ops::traced_ok;
using trace::Event;
using trace::OpClass;

// A read or write by the system call itself. The application's calls were a
// single-threaded process's, for which glibc skips the cancellation-point
// bookkeeping; the replay's threads would pay it on every call, and
// no replay thread is ever cancelled.
ssize_t raw_transfer(bool write, bool positional, int fd, char* buf, size_t n, int64_t at) {
  if (positional) return ::syscall(write ? SYS_pwrite64 : SYS_pread64, fd, buf, n, off_t(at));
  return ::syscall(write ? SYS_write : SYS_read, fd, buf, n);
}

}  // namespace

IoOutcome IoReplay::open_file(const Event& ev) {
  const trace::FileArgs a = file_args(ev);
  const std::string* path = mapped(a.file());
  if (!path) {
    if (traced_ok(ev)) fail(ev, ENOENT, "file id outside the plan");
    return {};
  }
  int flags = int(a.flags());
  mode_t mode = mode_t(a.mode());
  int fd = target_.sandbox->open(*path, flags, mode);
  if (fd == -EINVAL && (flags & O_DIRECT)) fd = target_.sandbox->open(*path, flags & ~O_DIRECT, mode);
  if (fd < 0) {
    if (traced_ok(ev)) fail(ev, -fd, "open");
    return {};
  }
  if (!traced_ok(ev)) {  // it failed when traced: keep nothing the application did not have
    ::close(fd);
    return {};
  }
  set_fd(a.handle(), fd, Owner::self);
  return {};
}

IoOutcome IoReplay::close_fd(const Event& ev) {
  auto it = fds_.find(io_args(ev).handle());
  if (it == fds_.end()) return {};
  if (it->second.owner == Owner::self && ::close(it->second.fd) != 0) fail(ev, errno);
  fds_.erase(it);
  return {};
}

IoOutcome IoReplay::dup_fd(const Event& ev, int fd) {
  const trace::FileArgs a = file_args(ev);
  int64_t target = a.handle2() >= 0 ? a.handle2() : ev.ret;
  if (target == a.handle()) return {};  // dup2(fd, fd)
  int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) {
    fail(ev, errno);
    return {};
  }
  set_fd(target, copy, Owner::self);
  return {};
}

// Under MPI_File_close every rank that used the shared file pointer deletes
// ROMIO's hidden pointer file (set_racing_unlinks): which deletion finds it
// is a race, not an error.
int IoReplay::unlink_path(const Event& ev, const std::string& path) {
  int r = io_ops::path_unlink(*target_.sandbox, ev, path);
  return r == -ENOENT && racing_unlinks_ ? 0 : r;
}

int IoReplay::rename_path(const Event& ev, const std::string& path) {
  const std::string* to = mapped(file_args(ev).file2());
  return to ? target_.sandbox->rename(path, *to) : -ENOENT;
}

int IoReplay::link_path(const Event& ev, const std::string& path) {
  const trace::FileArgs a = file_args(ev);
  const std::string* to = mapped(a.file2());
  if (!to) return -ENOENT;
  return trace::has_fact(ev.kind, trace::fact::symbolic) ? target_.sandbox->symlink(path, *to)
                                                         : target_.sandbox->link(path, *to);
}

// Bytes to move: writes repeat what the application actually wrote; reads
// ask for what it asked (a short read at end of file happens again).
// Stdio reads use what was consumed: fgets asks for a buffer, takes a line.
IoOutcome IoReplay::transfer(const Event& ev, int fd, FILE* fp) {
  const trace::IoArgs a = io_args(ev);
  bool write = ev.op() == OpClass::write;
  int64_t want = write || fp ? ev.ret : (a.count() >= 0 ? a.count() : ev.ret);
  if (want < 0) want = a.count();
  if (want <= 0) return {true, 0};
  const IoBuffer& buf = buffer_;
  bool positional = trace::has_fact(ev.kind, trace::fact::positional) && !fp;
  int64_t offset = a.offset();
  int64_t done = 0;
  int64_t began = mono_now_ns();
  // The buffer holds the plan's largest count, so this loops once.
  while (done < want) {
    size_t n = size_t(std::min<int64_t>(want - done, int64_t(buf.size())));
    ssize_t r;
    if (fp)
      r = ssize_t(write ? std::fwrite(buf.data(), 1, n, fp) : std::fread(buf.data(), 1, n, fp));
    else
      r = raw_transfer(write, positional, fd, buf.data(), n, offset + done);
    if (fp && size_t(r) < n && std::ferror(fp)) r = -1;
    if (r < 0) {
      fail(ev, errno, std::to_string(want) + " bytes");
      break;
    }
    done += r;
    if (size_t(r) < n) break;  // end of file (reads) or a short write the application also saw
  }
  int64_t end = mono_now_ns();
  return {true, done, end - began, end};
}

}  // namespace mpior::replay
