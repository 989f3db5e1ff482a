// The system calls that reissue a traced call on the replay's descriptor,
// stream or path, one for each variant that the lists' op classes and kind
// facts tell apart (IoReplay::calls, io_replay.cpp registers them). Each
// returns 0, or -1 with errno set (those on descriptors and streams) or
// -errno (those on paths, as Sandbox's calls do).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <string>

#include "replayer/sandbox.hpp"
#include "trace/arg_views.hpp"
#include "trace/event.hpp"
#include "trace/kind.hpp"

namespace mpior::replay::io_ops {

using trace::Event;
using trace::FileArgs;

// The traced call's own result said it worked.
// posix_fadvise and posix_fallocate return the errno itself.
inline bool traced_ok(const Event& ev) {
  trace::OpClass op = ev.op();
  if (op == trace::OpClass::fopen) return ev.ret != 0;
  if (op == trace::OpClass::advise || op == trace::OpClass::allocate) return ev.ret >= 0 && ev.err == 0;
  return ev.ret >= 0;
}

// ---- on a descriptor ---------------------------------------------------------

inline int fd_seek(const FileArgs& a, int fd) { return ::lseek(fd, off_t(a.offset()), int(a.flags())) < 0 ? -1 : 0; }
inline int fd_sync(const FileArgs&, int fd) { return ::fsync(fd); }
inline int fd_datasync(const FileArgs&, int fd) { return ::fdatasync(fd); }
inline int fd_syncfs(const FileArgs&, int fd) { return ::syncfs(fd); }
inline int fd_sync_range(const FileArgs& a, int fd) {
  return ::sync_file_range(fd, a.offset(), a.count(), unsigned(a.flags()));
}
inline int fd_truncate(const FileArgs& a, int fd) { return ::ftruncate(fd, off_t(a.offset())); }
inline int fd_stat(const FileArgs&, int fd) {
  struct stat st {};
  return ::fstat(fd, &st);
}

// posix_fadvise returns the errno itself; readahead (its list line's fact)
// has a handler of its own.
inline int fd_advise(const FileArgs& a, int fd) {
  int r = ::posix_fadvise(fd, off_t(a.offset()), off_t(a.count()), int(a.flags()));
  if (r != 0) errno = r, r = -1;
  return r;
}
inline int fd_readahead(const FileArgs& a, int fd) {
  return ::readahead(fd, a.offset(), size_t(std::max<int64_t>(a.count(), 0))) < 0 ? -1 : 0;
}

inline int fd_allocate(const FileArgs& a, int fd) {
  return ::fallocate(fd, int(a.mode()), off_t(a.offset()), off_t(a.count()));
}
// posix_fallocate (fact returns_errno among the allocations).
inline int fd_posix_allocate(const FileArgs& a, int fd) {
  int r = ::posix_fallocate(fd, off_t(a.offset()), off_t(a.count()));
  if (r != 0) errno = r, r = -1;
  return r;
}

// ---- on a stream -------------------------------------------------------------

inline int stream_seek(const FileArgs& a, FILE* fp) { return ::fseeko(fp, off_t(a.offset()), int(a.flags())); }
inline int stream_tell(const FileArgs&, FILE* fp) { return ::ftello(fp) < 0 ? -1 : 0; }
inline int stream_flush(const FileArgs&, FILE* fp) { return std::fflush(fp) == 0 ? 0 : -1; }

// ---- on a path ---------------------------------------------------------------

// unlinkat(AT_REMOVEDIR) removes a directory.
inline int path_unlink(const Sandbox& box, const Event& ev, const std::string& path) {
  return trace::file_args(ev).flags() & AT_REMOVEDIR ? box.rmdir(path) : box.unlink(path);
}
inline int path_rmdir(const Sandbox& box, const Event&, const std::string& path) { return box.rmdir(path); }
inline int path_mkdir(const Sandbox& box, const Event& ev, const std::string& path) {
  return box.mkdir(path, mode_t(trace::file_args(ev).mode() & 07777));
}

// An input file the traced program found executable (a shell's PATH search,
// python3 behind pyenv's shims): the plan has no file modes, and setup made
// it 0644. It gets the execute bits the traced call saw.
inline int path_access(const Sandbox& box, const Event& ev, const std::string& path) {
  int mode = int(trace::file_args(ev).mode());
  int r = box.access(path, mode);
  if (r == -EACCES && (mode & X_OK) && traced_ok(ev) && box.grant_exec(path) == 0) r = box.access(path, mode);
  return r;
}

// lstat by its kind's fact; fstatat and statx by AT_SYMLINK_NOFOLLOW in the flags slot.
inline int path_stat(const Sandbox& box, const Event& ev, const std::string& path) {
  struct stat st {};
  bool follow =
      !trace::has_fact(ev.kind, trace::fact::nofollow) && !(trace::file_args(ev).flags() & AT_SYMLINK_NOFOLLOW);
  return box.stat(path, &st, follow);
}

inline int path_truncate(const Sandbox& box, const Event& ev, const std::string& path) {
  int fd = box.open(path, O_WRONLY);
  int r = fd < 0 ? fd : ::ftruncate(fd, off_t(trace::file_args(ev).offset())) == 0 ? 0 : -errno;
  if (fd >= 0) ::close(fd);
  return r;
}

}  // namespace mpior::replay::io_ops
