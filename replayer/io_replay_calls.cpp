// IoReplay's calls beyond descriptors and streams: POSIX AIO requests,
// in-kernel copies, directory streams and mappings.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "replayer/io_replay.hpp"
#include "trace/arg_views.hpp"

namespace mpior::replay {

using trace::Event;
using trace::OpClass;

IoOutcome IoReplay::nested(const Event& ev, bool under_list) {
  if (ev.op() == OpClass::asubmit && under_list && ev.ret == 0) return aio_submit(ev);
  if (ev.op() != OpClass::adone) return {false, 0};
  int64_t result = 0;
  if (aio_.complete(aio_args(ev).aio_req(), result) && result < 0 && ev.ret >= 0) fail(ev, int(-result), "aio");
  return {};
}

IoOutcome IoReplay::aio_submit(const Event& ev) {
  const trace::AioArgs a = aio_args(ev);
  sizes_.unknown(global_file(a.file()));  // where its writes end, the log does not follow
  int fd = fd_for(ev);
  if (fd < 0) {
    fail(ev, -fd, "fd " + std::to_string(a.handle()) + " is not open in the replay");
    return {};
  }
  int64_t op = a.lio_op();
  int64_t count = std::min<int64_t>(std::max<int64_t>(a.count(), 0), int64_t(buffer_.size()));
  bool kernel = a.submit_kind() == int64_t(trace::Kind::io_submit);  // libaio's: the kernel's AIO
  int err = aio_.submit(a.aio_req(), fd, op, a.offset(), count, buffer_.data(), kernel);
  if (err) {
    fail(ev, err, "submit");
    return {};
  }
  return {true, op == trace::kAioRead || op == trace::kAioWrite ? count : 0};
}

// Both ends traced: the copy again, in the kernel. One end only (a socket or
// a pipe on the other): that end's read or write.
IoOutcome IoReplay::copy(const Event& ev) {
  const trace::FileArgs a = file_args(ev);
  int64_t want = ev.ret;
  if (want <= 0) return {true, 0};
  bool in = a.file() >= 0, out = a.file2() >= 0;
  int fin = in ? fd_for(a.handle(), a.file()) : -1;
  int fout = out ? fd_for(a.handle2(), a.file2()) : -1;
  if ((in && fin < 0) || (out && fout < 0)) {
    fail(ev, EBADF, "copy end not open in the replay");
    return {};
  }
  int64_t flags = a.flags();
  loff_t off_in = a.offset(), off_out = a.offset2();
  loff_t* pin = flags & trace::kCopyInPositional ? &off_in : nullptr;
  loff_t* pout = flags & trace::kCopyOutPositional ? &off_out : nullptr;
  const IoBuffer& buf = buffer_;
  int64_t done = 0;
  while (done < want) {
    size_t n = size_t(want - done);
    ssize_t r;
    if (in && out) {
      r = ::copy_file_range(fin, pin, fout, pout, n, 0);
      // The source is shorter than when traced: its writer (another thread
      // of the replay: a process's part before its exec, say) is not there
      // yet. The destination still gets the bytes the copy wrote.
      if (r == 0) {
        n = std::min(n, buf.size());
        r = pout ? ::pwrite(fout, buf.data(), n, *pout) : ::write(fout, buf.data(), n);
        if (r > 0 && pout) *pout += r;
      }
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

int IoReplay::open_dir(const Event& ev, const std::string& path) {
  int fd = target_.sandbox->open(path, O_RDONLY | O_DIRECTORY);
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
  if (auto old = dirs_.find(io_args(ev).handle()); old != dirs_.end()) ::closedir(old->second);
  dirs_[io_args(ev).handle()] = d;
  return 0;
}

// fdopendir: the stream takes a copy of the fd's directory.
IoOutcome IoReplay::fdopen_dir(const Event& ev) {
  const std::string* path = mapped(io_args(ev).file());
  int r = path ? open_dir(ev, *path) : -ENOENT;
  if (r < 0) fail(ev, -r, "fdopendir");
  return {};
}

// The directory stream of the event's handle, opened on its file if the
// replay has none (nullptr, recorded as failed: none either way).
DIR* IoReplay::dir_for(const Event& ev) {
  int64_t handle = io_args(ev).handle();
  auto it = dirs_.find(handle);
  if (it == dirs_.end()) {
    const std::string* path = mapped(io_args(ev).file());
    if (!path || open_dir(ev, *path) < 0 || (it = dirs_.find(handle)) == dirs_.end()) {
      fail(ev, EBADF, "directory stream not open in the replay");
      return nullptr;
    }
  }
  return it->second;
}

IoOutcome IoReplay::read_dir(const Event& ev) {
  if (DIR* d = dir_for(ev)) ::readdir(d);
  return {};
}

IoOutcome IoReplay::close_dir(const Event& ev) {
  if (DIR* d = dir_for(ev)) {
    ::closedir(d);
    dirs_.erase(io_args(ev).handle());
  }
  return {};
}

namespace {

// Touches one byte per page of [from, from + len) within the file's size:
// reads fault the pages in, writes dirty them.
void touch(char* addr, int64_t from, int64_t len, int64_t map_offset, int fd, bool write) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return;
  int64_t end = std::min(from + len, int64_t(st.st_size) - map_offset);
  long page = ::sysconf(_SC_PAGESIZE);
  volatile char sink = 0;
  for (int64_t at = from; at < end; at += page) {
    if (write)
      addr[at] = sink;
    else
      sink = sink + addr[at];
  }
}

}  // namespace

IoOutcome IoReplay::map_new(const Event& ev) {
  const trace::MapArgs a = map_args(ev);
  int fd = fd_for(ev);
  if (fd < 0) {
    fail(ev, -fd, "fd " + std::to_string(a.handle()) + " is not open in the replay");
    return {};
  }
  int prot = int(a.map_prot()), flags = int(a.map_flags()) & (MAP_SHARED | MAP_PRIVATE);
  size_t len = size_t(a.map_len());
  void* p = ::mmap(nullptr, len, prot, flags, fd, off_t(a.offset()));
  int copy = p == MAP_FAILED ? -1 : ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (p == MAP_FAILED || copy < 0) {
    fail(ev, errno, "mmap");
    if (p != MAP_FAILED) ::munmap(p, len);
    return {};
  }
  Mapping m{static_cast<char*>(p), len, a.offset(), copy};
  if (auto old = maps_.find(a.map_id()); old != maps_.end()) {
    ::munmap(old->second.addr, old->second.len);
    ::close(old->second.fd);
  }
  maps_[a.map_id()] = m;
  int64_t bytes = a.count();
  if (bytes > 0) touch(m.addr, 0, bytes, m.offset, m.fd, false);
  return {true, std::max<int64_t>(bytes, 0)};
}

// msync, munmap and mremap first write back (dirty) the bytes the trace
// counted (mremap: the tail a shrink unmaps); then(it, start, len) is the
// call itself on the `len` bytes from `start` (a page boundary) it named,
// 0 or -1 with errno.
template <class F>
IoOutcome IoReplay::written_back(const Event& ev, F&& then) {
  const trace::MapArgs a = map_args(ev);
  auto it = maps_.find(a.map_id());
  if (it == maps_.end()) return {true, 0};
  Mapping& m = it->second;
  int64_t skip = std::clamp<int64_t>(a.offset() - m.offset, 0, int64_t(m.len));
  int64_t len = std::min<int64_t>(a.map_len(), int64_t(m.len) - skip);
  int64_t bytes = std::max<int64_t>(a.count(), 0);
  if (bytes > 0) touch(m.addr, skip, bytes, m.offset, m.fd, true);
  long page = ::sysconf(_SC_PAGESIZE);
  int64_t start = skip / page * page;
  if (then(it, start, size_t(len + skip - start)) != 0) fail(ev, errno, std::string(trace::name(ev.kind)));
  return {true, bytes};
}

IoOutcome IoReplay::map_sync(const Event& ev) {
  int flags = int(map_args(ev).map_prot()) & (MS_ASYNC | MS_SYNC);
  return written_back(
      ev, [&](Maps::iterator it, int64_t start, size_t len) { return ::msync(it->second.addr + start, len, flags); });
}

// mremap moves the mapping.
IoOutcome IoReplay::map_move(const Event& ev) {
  size_t to = size_t(map_args(ev).map_len());
  return written_back(ev, [&](Maps::iterator it, int64_t, size_t) {
    Mapping& m = it->second;
    void* p = ::mremap(m.addr, m.len, to, MREMAP_MAYMOVE);
    if (p == MAP_FAILED) return -1;
    m.addr = static_cast<char*>(p);
    m.len = to;
    return 0;
  });
}

IoOutcome IoReplay::map_end(const Event& ev) {
  return written_back(ev, [&](Maps::iterator it, int64_t start, size_t len) {
    Mapping& m = it->second;
    if (start != 0 || len < m.len) return ::munmap(m.addr + start, len);
    int r = ::munmap(m.addr, m.len);  // unmapped whole (or alive at exit)
    ::close(m.fd);
    maps_.erase(it);
    return r;
  });
}

}  // namespace mpior::replay
