// IoReplay's stdio streams: fopen and fdopen, fclose and fflush(NULL); the
// calls on one stream are io_replay_ops.hpp's.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "replayer/io_replay.hpp"
#include "replayer/io_replay_ops.hpp"
#include "trace/arg_views.hpp"

namespace mpior::replay {
namespace {

using io_ops::traced_ok;
using trace::Event;

// fopen's mode string back from the open flags the tracer derived from it.
const char* stdio_mode(int flags) {
  int acc = flags & O_ACCMODE;
  if (acc == O_RDONLY) return "r";
  if (flags & O_APPEND) return acc == O_RDWR ? "a+" : "a";
  if (flags & (O_TRUNC | O_CREAT)) return acc == O_RDWR ? "w+" : "w";
  return "r+";
}

}  // namespace

IoOutcome IoReplay::open_stream(const Event& ev) {
  const trace::FileArgs a = file_args(ev);
  const std::string* path = mapped(a.file());
  return stream_on(ev, path ? target_.sandbox->open(*path, int(a.flags()), 0666) : -ENOENT, nullptr);
}

// fdopen: the stream takes over an open descriptor.
IoOutcome IoReplay::fdopen_stream(const Event& ev) {
  if (!traced_ok(ev)) return {};
  auto it = fds_.find(file_args(ev).handle2());
  if (it == fds_.end()) {
    fail(ev, EBADF, "fdopen of a descriptor the replay does not have");
    return {};
  }
  if (it->second.owner != Owner::self)  // a shared sink (stdout) or a descriptor another stream has: a copy of our own
    return stream_on(ev, ::fcntl(it->second.fd, F_DUPFD_CLOEXEC, 0), nullptr);
  it->second.owner = Owner::stream;
  return stream_on(ev, it->second.fd, &it->second);
}

// The stream an open made on fd (< 0: the open failed); `taken` is the
// descriptor entry the stream took over, if any.
IoOutcome IoReplay::stream_on(const Event& ev, int fd, Fd* taken) {
  const trace::FileArgs a = file_args(ev);
  if (fd < 0) {
    if (traced_ok(ev)) fail(ev, -fd, "fopen");
    return {};
  }
  FILE* fp = ::fdopen(fd, stdio_mode(int(a.flags())));
  if (!fp) {
    int e = errno;
    if (taken)
      taken->owner = Owner::self;
    else
      ::close(fd);
    if (traced_ok(ev)) fail(ev, e, "fdopen");
    return {};
  }
  if (!traced_ok(ev)) {
    std::fclose(fp);
    return {};
  }
  if (auto old = streams_.find(a.handle()); old != streams_.end()) std::fclose(old->second.fp);
  streams_[a.handle()] = {fp, fd};
  return {};
}

IoOutcome IoReplay::close_stream(const Event& ev) {
  auto it = streams_.find(io_args(ev).handle());
  if (it == streams_.end()) return {};
  int fd = it->second.fd;
  if (std::fclose(it->second.fp) != 0) fail(ev, errno);
  streams_.erase(it);
  // An fdopen'ed descriptor went with its stream.
  std::erase_if(fds_, [fd](const auto& entry) { return entry.second.owner == Owner::stream && entry.second.fd == fd; });
  return {};
}

// fflush(NULL) flushed every stream of the traced process: here the rank's
// (the replay's other ranks are other processes).
IoOutcome IoReplay::flush_all(const Event& ev) {
  bool failed = false;
  for (auto& [id, stream] : streams_) failed = std::fflush(stream.fp) != 0 || failed;
  if (failed && traced_ok(ev)) fail(ev, errno);
  return {};
}

}  // namespace mpior::replay
