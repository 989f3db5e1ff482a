// IoReplay's calls beyond plain reads and writes: POSIX AIO requests,
// in-kernel copies and directory streams.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "io_replay.hpp"

namespace mpior::replay {

using trace::Event;
using trace::OpClass;
namespace arg = trace::arg;

IoOutcome IoReplay::nested(const Event& ev, bool under_list) {
  if (ev.op() == OpClass::asubmit && under_list && ev.ret == 0) return aio_submit(ev);
  if (ev.op() != OpClass::adone) return {false, 0};
  int64_t result = 0;
  if (aio_.complete(ev.args[arg::aio_req], result) && result < 0 && ev.ret >= 0) fail(ev, int(-result), "aio");
  return {};
}

IoOutcome IoReplay::aio_submit(const Event& ev) {
  int fd = fd_for(ev);
  if (fd < 0) {
    fail(ev, -fd, "fd " + std::to_string(ev.args[arg::handle]) + " is not open in the replay");
    return {};
  }
  int64_t op = ev.args[arg::lio_op];
  int64_t count = std::min<int64_t>(std::max<int64_t>(ev.args[arg::count], 0), int64_t(target_.buffer->size()));
  int err = aio_.submit(ev.args[arg::aio_req], fd, op, ev.args[arg::offset], count, target_.buffer->data());
  if (err) {
    fail(ev, err, "submit");
    return {};
  }
  return {true, op == trace::kAioRead || op == trace::kAioWrite ? count : 0};
}

// Both ends traced: the copy again, in the kernel. One end only (a socket or
// a pipe on the other): that end's read or write.
IoOutcome IoReplay::copy(const Event& ev) {
  int64_t want = ev.ret;
  if (want <= 0) return {true, 0};
  bool in = ev.args[arg::file] >= 0, out = ev.args[arg::file2] >= 0;
  int fin = in ? fd_for(ev.args[arg::handle], ev.args[arg::file]) : -1;
  int fout = out ? fd_for(ev.args[arg::handle2], ev.args[arg::file2]) : -1;
  if ((in && fin < 0) || (out && fout < 0)) {
    fail(ev, EBADF, "copy end not open in the replay");
    return {};
  }
  int64_t flags = ev.args[arg::flags];
  loff_t off_in = ev.args[arg::offset], off_out = ev.args[arg::offset2];
  loff_t* pin = flags & trace::kCopyInPositional ? &off_in : nullptr;
  loff_t* pout = flags & trace::kCopyOutPositional ? &off_out : nullptr;
  const IoBuffer& buf = *target_.buffer;
  int64_t done = 0;
  while (done < want) {
    size_t n = size_t(want - done);
    ssize_t r;
    if (in && out) {
      r = ::copy_file_range(fin, pin, fout, pout, n, 0);
    } else {
      n = std::min(n, buf.size());
      int fd = in ? fin : fout;
      loff_t* p = in ? pin : pout;
      if (in)
        r = p ? ::pread(fd, buf.data(), n, *p) : ::read(fd, buf.data(), n);
      else
        r = p ? ::pwrite(fd, buf.data(), n, *p) : ::write(fd, buf.data(), n);
      if (r > 0 && p) *p += r;
    }
    if (r < 0) {
      fail(ev, errno, std::to_string(want) + " bytes");
      break;
    }
    if (r == 0) break;
    done += r;
  }
  return {true, done};
}

int IoReplay::open_dir(const Event& ev, const std::string* path) {
  int fd = target_.sandbox->open(*path, O_RDONLY | O_DIRECTORY);
  if (fd < 0) return fd;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    int e = errno;
    ::close(fd);
    return -e;
  }
  if (ev.ret < 0) {  // it failed when traced: keep nothing
    ::closedir(d);
    return 0;
  }
  if (auto old = dirs_.find(ev.args[arg::handle]); old != dirs_.end()) ::closedir(old->second);
  dirs_[ev.args[arg::handle]] = d;
  return 0;
}

IoOutcome IoReplay::dir_call(const Event& ev) {
  int64_t handle = ev.args[arg::handle];
  if (ev.op() == OpClass::opendir) {  // fdopendir: the stream takes a copy of the fd's directory
    const std::string* path = mapped(ev.args[arg::file]);
    int r = path ? open_dir(ev, path) : -ENOENT;
    if (r < 0) fail(ev, -r, "fdopendir");
    return {};
  }
  auto it = dirs_.find(handle);
  if (it == dirs_.end()) {
    const std::string* path = mapped(ev.args[arg::file]);
    if (!path || open_dir(ev, path) < 0 || (it = dirs_.find(handle)) == dirs_.end()) {
      fail(ev, EBADF, "directory stream not open in the replay");
      return {};
    }
  }
  if (ev.op() == OpClass::readdir) {
    ::readdir(it->second);
    return {};
  }
  ::closedir(it->second);
  dirs_.erase(it);
  return {};
}

}  // namespace mpior::replay
