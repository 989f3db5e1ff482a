#include "replayer/io_replay.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "replayer/pacing_clock.hpp"
#include "trace/arg_views.hpp"

namespace mpior::replay {
namespace {

using trace::Event;
using trace::Kind;
using trace::OpClass;

// A read or write by the system call itself. The application's calls were a
// single-threaded process's, for which glibc skips the cancellation-point
// bookkeeping; the replay's threads would pay it (~30 ns) on every call, and
// no replay thread is ever cancelled.
ssize_t raw_transfer(bool write, bool positional, int fd, char* buf, size_t n, int64_t at) {
  if (positional) return ::syscall(write ? SYS_pwrite64 : SYS_pread64, fd, buf, n, off_t(at));
  return ::syscall(write ? SYS_write : SYS_read, fd, buf, n);
}

// fopen's mode string back from the open flags the tracer derived from it.
const char* stdio_mode(int flags) {
  int acc = flags & O_ACCMODE;
  if (acc == O_RDONLY) return "r";
  if (flags & O_APPEND) return acc == O_RDWR ? "a+" : "a";
  if (flags & (O_TRUNC | O_CREAT)) return acc == O_RDWR ? "w+" : "w";
  return "r+";
}

// The traced call's own result said it worked.
// posix_fadvise and posix_fallocate return the errno itself.
bool traced_ok(const Event& ev) {
  if (ev.op() == OpClass::fopen) return ev.ret != 0;
  if (ev.op() == OpClass::advise || ev.op() == OpClass::allocate) return ev.ret >= 0 && ev.err == 0;
  return ev.ret >= 0;
}

bool fatal_for_target(int err) { return err == ENOSPC || err == EDQUOT || err == EROFS; }

}  // namespace

IoReplay::IoReplay(const Target& target, const trace::Plan& plan, int32_t rank, ErrorLog& errors, Progress& progress,
                   std::string who)
    : target_(target),
      plan_(plan),
      rank_(plan.ranks[size_t(rank)]),
      errors_(errors),
      progress_(progress),
      who_(std::move(who)) {
  for (int i = 0; i < 3; ++i) fds_[i] = {target.stdio_fds[size_t(i)], Owner::shared};
}

IoReplay::~IoReplay() { close_all(); }

void IoReplay::close_all() {
  aio_.drain();
  for (auto& [handle, d] : dirs_) ::closedir(d);
  dirs_.clear();
  for (auto& [id, m] : maps_) {
    ::munmap(m.addr, m.len);
    ::close(m.fd);
  }
  maps_.clear();
  for (auto& [id, s] : streams_) std::fclose(s.fp);
  streams_.clear();
  for (auto& [handle, f] : fds_)
    if (f.owner == Owner::self) ::close(f.fd);
  fds_.clear();
}

int32_t IoReplay::global_file(int64_t local) const {
  if (local < 0 || size_t(local) >= rank_.files.size()) return -1;
  int32_t g = rank_.files[size_t(local)];
  return g >= 0 && size_t(g) < plan_.files.size() ? g : -1;
}

const std::string* IoReplay::mapped(int64_t local) {
  int32_t g = global_file(local);
  if (g < 0) return nullptr;
  if (!target_.relative[size_t(g)]) return &target_.mapped[size_t(g)];
  auto it = relative_paths_.find(g);
  if (it == relative_paths_.end())
    it = relative_paths_.emplace(g, map_path(plan_.files[size_t(g)].path, rank_.cwd)).first;
  return &it->second;
}

std::string IoReplay::traced_path(int64_t local) const {
  int32_t g = global_file(local);
  return g < 0 ? "file #" + std::to_string(local) : plan_.files[size_t(g)].path;
}

void IoReplay::fail(const Event& ev, int err, const std::string& detail) {
  std::string msg = who_ + ": " + std::string(trace::name(ev.kind)) + " on " + traced_path(io_args(ev).file());
  if (!detail.empty()) msg += " (" + detail + ")";
  msg += ": " + std::string(std::strerror(err));
  if (fatal_for_target(err))
    progress_.abort("the target file system cannot take the replay: " + msg);
  else if (holding_ && (err == ENOENT || err == EEXIST || err == ENOTEMPTY || err == ENOTDIR))
    held_ = std::move(msg);
  else
    errors_.add(std::move(msg));
}

void IoReplay::set_fd(int64_t handle, int fd, Owner owner) {
  auto it = fds_.find(handle);
  // The traced process could only get this number back once it was free: the
  // old descriptor here was closed by something the trace does not show.
  if (it != fds_.end() && it->second.owner == Owner::self) ::close(it->second.fd);
  fds_[handle] = {fd, owner};
}

// The descriptor for the event's handle; a handle the replay never saw opened
// (inherited, or opened by an untraced call) is opened on the event's file.
int IoReplay::fd_for(int64_t handle, int64_t file) {
  if (auto it = fds_.find(handle); it != fds_.end()) {
    // fd 0-2 on a file: a process the shell started with its output
    // redirected (`cat a > b`) writes b through fd 1.
    if (it->second.owner != Owner::shared || global_file(file) < 3) return it->second.fd;
    fds_.erase(it);
  }
  const std::string* path = mapped(file);
  if (!path) return -EBADF;
  int fd = target_.sandbox->open(*path, O_RDWR | O_CREAT, 0644);
  if (fd == -EISDIR || fd == -EACCES) fd = target_.sandbox->open(*path, O_RDONLY);
  if (fd >= 0) fds_[handle] = {fd, Owner::self};
  return fd;
}

FILE* IoReplay::stream_for(const Event& ev) {
  int64_t id = io_args(ev).handle();
  if (auto it = streams_.find(id); it != streams_.end()) return it->second.fp;
  int fd = -1;
  const char* mode = "r+";
  if (id >= 0 && id < 3) {  // stdin, stdout, stderr: a stream of our own on the shared sink
    fd = ::fcntl(target_.stdio_fds[size_t(id)], F_DUPFD_CLOEXEC, 0);
    mode = id == 0 ? "r" : "a";
  } else if (const std::string* path = mapped(io_args(ev).file())) {
    fd = target_.sandbox->open(*path, O_RDWR | O_CREAT, 0644);
  }
  if (fd < 0) return nullptr;
  FILE* fp = ::fdopen(fd, mode);
  if (!fp) {
    ::close(fd);
    return nullptr;
  }
  streams_[id] = {fp, fd};
  return fp;
}

// Each kind's call by its family and op class (kind_table.hpp): a kind added
// to a list is replayed as the others of its op class are; a new op class
// or family fails the build here until it is given a call (or `nothing_to_reissue`).
constexpr KindTable<IoReplay::Call> IoReplay::calls() {
  using F = trace::Family;
  using Op = OpClass;
  return kind_table<Call>({
      {F::posix, Op::open, &IoReplay::open_file},
      {F::posix, Op::close, &IoReplay::close_fd},
      {F::posix, Op::copy, &IoReplay::copy},
      {F::posix, Op::opendir, &IoReplay::dir_call},
      {F::posix, Op::readdir, &IoReplay::dir_call},
      {F::posix, Op::closedir, &IoReplay::dir_call},
      {F::posix, Op::read, &IoReplay::by_fd},
      {F::posix, Op::write, &IoReplay::by_fd},
      {F::posix, Op::seek, &IoReplay::by_fd},
      {F::posix, Op::sync, &IoReplay::by_fd},
      {F::posix, Op::advise, &IoReplay::by_fd},
      {F::posix, Op::allocate, &IoReplay::by_fd},
      {F::posix, Op::truncate, &IoReplay::by_fd},
      {F::posix, Op::stat, &IoReplay::by_fd},
      {F::posix, Op::dup, &IoReplay::by_fd},
      {F::posix, Op::unlink, &IoReplay::path_op},
      {F::posix, Op::rename, &IoReplay::path_op},
      {F::posix, Op::mkdir, &IoReplay::path_op},
      {F::posix, Op::rmdir, &IoReplay::path_op},
      {F::posix, Op::access, &IoReplay::path_op},
      {F::posix, Op::link, &IoReplay::path_op},
      {F::posix, Op::process, &IoReplay::nothing_to_reissue},
      {F::stdio, Op::fopen, &IoReplay::open_stream},
      {F::stdio, Op::fclose, &IoReplay::close_stream},
      {F::stdio, Op::read, &IoReplay::by_stream},
      {F::stdio, Op::write, &IoReplay::by_stream},
      {F::stdio, Op::seek, &IoReplay::by_stream},
      {F::stdio, Op::tell, &IoReplay::by_stream},
      {F::stdio, Op::sync, &IoReplay::by_stream},
      {F::mmap, Op::map, &IoReplay::map_new},
      {F::mmap, Op::unmap, &IoReplay::map_call},
      {F::mmap, Op::msync, &IoReplay::map_call},
      {F::mmap, Op::remap, &IoReplay::map_call},
      {F::aio, Op::asubmit, &IoReplay::aio_submit},
      {F::aio, Op::alist, &IoReplay::by_records},
      {F::aio, Op::atest, &IoReplay::by_records},
      {F::aio, Op::await, &IoReplay::by_records},
      {F::aio, Op::acancel, &IoReplay::by_records},
      {F::aio, Op::adone, &IoReplay::by_records},
      {F::mpi, std::nullopt, &IoReplay::not_file_work},
      {F::mpiio, std::nullopt, &IoReplay::not_file_work},
      {F::internal, std::nullopt, &IoReplay::not_file_work},
  });
}

IoOutcome IoReplay::replay(const Event& ev) {
  static constexpr auto kCalls = calls();
  static_assert(every_kind_handled(kCalls), "a kind of trace/api/*.list has no file system replay: register one");
  OpClass op = ev.op();
  bool opens = op == OpClass::open || op == OpClass::fopen;
  bool names_path = op == OpClass::unlink || op == OpClass::rename || op == OpClass::mkdir || op == OpClass::rmdir ||
                    op == OpClass::access || op == OpClass::link ||
                    (op == OpClass::stat && !trace::has_fact(ev.kind, trace::fact::by_fd)) ||
                    (op == OpClass::truncate && trace::has_fact(ev.kind, trace::fact::by_path)) ||
                    (op == OpClass::opendir && file_args(ev).handle2() < 0);
  bool two_names = op == OpClass::rename || op == OpClass::link || op == OpClass::copy;
  sizes_.posix(ev, traced_ok(ev), global_file(io_args(ev).file()), two_names ? global_file(file_args(ev).file2()) : -1);
  // An open or a path lookup that failed when traced still costs the file
  // system a lookup; anything on a handle that failed has nothing to reissue.
  if (!traced_ok(ev) && !opens && !names_path) return {false, 0};
  if (names_path) return path_op(ev);
  return (this->*kCalls[size_t(ev.kind)])(ev);
}

IoOutcome IoReplay::path_op(const Event& ev) {
  const trace::FileArgs a = file_args(ev);
  const std::string* path = mapped(a.file());
  if (!path) {
    if (traced_ok(ev)) fail(ev, ENOENT, "file id outside the plan");
    return {};
  }
  const Sandbox& box = *target_.sandbox;
  int r = 0;
  struct stat st {};
  switch (ev.op()) {
    case OpClass::unlink:
      r = a.flags() & AT_REMOVEDIR ? box.rmdir(*path) : box.unlink(*path);
      break;
    case OpClass::rmdir:
      r = box.rmdir(*path);
      break;
    case OpClass::mkdir:
      r = box.mkdir(*path, mode_t(a.mode() & 07777));
      break;
    case OpClass::access: {
      int mode = int(a.mode());
      r = box.access(*path, mode);
      // An input file the traced program found executable (a shell's PATH
      // search, python3 behind pyenv's shims): the plan has no file modes, and
      // setup made it 0644. It gets the execute bits the traced call saw.
      if (r == -EACCES && (mode & X_OK) && traced_ok(ev) && box.grant_exec(*path) == 0) r = box.access(*path, mode);
      break;
    }
    case OpClass::stat:  // fstatat and statx: AT_SYMLINK_NOFOLLOW in the flags slot
      r = box.stat(*path, &st, !trace::has_fact(ev.kind, trace::fact::nofollow) && !(a.flags() & AT_SYMLINK_NOFOLLOW));
      break;
    case OpClass::rename: {
      const std::string* to = mapped(a.file2());
      r = to ? box.rename(*path, *to) : -ENOENT;
      break;
    }
    case OpClass::link: {
      const std::string* to = mapped(a.file2());
      r = !to ? -ENOENT : a.flags() == trace::kSymlink ? box.symlink(*path, *to) : box.link(*path, *to);
      break;
    }
    case OpClass::truncate: {
      int fd = box.open(*path, O_WRONLY);
      r = fd < 0 ? fd : ::ftruncate(fd, off_t(a.offset())) == 0 ? 0 : -errno;
      if (fd >= 0) ::close(fd);
      break;
    }
    case OpClass::opendir:
      r = open_dir(ev, path);
      break;
    default:
      break;
  }
  bool raced = r == -ENOENT && ev.op() == OpClass::unlink && racing_unlinks_;
  if (r < 0 && traced_ok(ev) && !raced) fail(ev, -r);
  return {};
}

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

IoOutcome IoReplay::by_fd(const Event& ev) {
  int fd = fd_for(ev);
  if (fd < 0) {
    fail(ev, -fd, "fd " + std::to_string(io_args(ev).handle()) + " is not open in the replay");
    return {};
  }
  return fd_call(ev, fd);
}

IoOutcome IoReplay::fd_call(const Event& ev, int fd) {
  const trace::FileArgs a = file_args(ev);
  int r = 0;
  switch (ev.op()) {
    case OpClass::read:
    case OpClass::write:
      return transfer(ev, fd, nullptr);
    case OpClass::seek:
      r = ::lseek(fd, off_t(a.offset()), int(a.flags())) < 0 ? -1 : 0;
      break;
    case OpClass::tell:
      r = ::lseek(fd, 0, SEEK_CUR) < 0 ? -1 : 0;
      break;
    case OpClass::sync:
      if (ev.kind == Kind::fdatasync)
        r = ::fdatasync(fd);
      else if (ev.kind == Kind::syncfs)
        r = ::syncfs(fd);
      else if (ev.kind == Kind::sync_file_range)
        r = ::sync_file_range(fd, a.offset(), a.count(), unsigned(a.flags()));
      else
        r = ::fsync(fd);
      break;
    case OpClass::advise:
      if (a.flags() == trace::kReadahead) {
        r = ::readahead(fd, a.offset(), size_t(std::max<int64_t>(a.count(), 0))) < 0 ? -1 : 0;
      } else {
        r = ::posix_fadvise(fd, off_t(a.offset()), off_t(a.count()), int(a.flags()));
        if (r != 0) errno = r, r = -1;
      }
      break;
    case OpClass::allocate:
      if (a.mode() == trace::kPosixAllocate) {
        r = ::posix_fallocate(fd, off_t(a.offset()), off_t(a.count()));
        if (r != 0) errno = r, r = -1;
      } else {
        r = ::fallocate(fd, int(a.mode()), off_t(a.offset()), off_t(a.count()));
      }
      break;
    case OpClass::truncate:
      r = ::ftruncate(fd, off_t(a.offset()));
      break;
    case OpClass::stat: {
      struct stat st {};
      r = ::fstat(fd, &st);
      break;
    }
    case OpClass::dup: {
      int64_t target = a.handle2() >= 0 ? a.handle2() : ev.ret;
      if (target == a.handle()) return {};  // dup2(fd, fd)
      int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
      if (copy >= 0) set_fd(target, copy, Owner::self);
      r = copy < 0 ? -1 : 0;
      break;
    }
    default:
      return {false, 0};
  }
  if (r < 0) fail(ev, errno);
  return {};
}

bool IoReplay::times_itself(const Event& ev) {
  OpClass op = ev.op();
  trace::Family family = trace::info(ev.kind).family;
  return (op == OpClass::read || op == OpClass::write) && traced_ok(ev) &&
         (family == trace::Family::posix || family == trace::Family::stdio);
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
  const IoBuffer& buf = *target_.buffer;
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

IoOutcome IoReplay::by_stream(const Event& ev) {
  if (ev.op() == OpClass::sync && io_args(ev).handle() == -1) return flush_all(ev);  // fflush(NULL)
  FILE* fp = stream_for(ev);
  if (!fp) {
    fail(ev, EBADF, "stream " + std::to_string(io_args(ev).handle()) + " is not open in the replay");
    return {};
  }
  return stream_call(ev, fp);
}

// fflush(NULL) flushed every stream of the traced process: here the rank's
// (the replay's other ranks are other processes).
IoOutcome IoReplay::flush_all(const Event& ev) {
  bool failed = false;
  for (auto& [id, stream] : streams_) failed = std::fflush(stream.fp) != 0 || failed;
  if (failed && traced_ok(ev)) fail(ev, errno);
  return {};
}

IoOutcome IoReplay::stream_call(const Event& ev, FILE* fp) {
  int r = 0;
  switch (ev.op()) {
    case OpClass::read:
    case OpClass::write:
      return transfer(ev, -1, fp);
    case OpClass::seek:
      r = ::fseeko(fp, off_t(io_args(ev).offset()), int(file_args(ev).flags()));
      break;
    case OpClass::tell:
      r = ::ftello(fp) < 0 ? -1 : 0;
      break;
    case OpClass::sync:
      r = std::fflush(fp);
      break;
    default:
      return {false, 0};
  }
  if (r != 0) fail(ev, errno);
  return {};
}

IoOutcome IoReplay::open_stream(const Event& ev) {
  const trace::FileArgs a = file_args(ev);
  int flags = int(a.flags());
  int fd;
  Fd* taken = nullptr;            // the descriptor entry the stream took over, if any
  if (ev.kind == Kind::fdopen) {  // the stream takes over an open descriptor
    if (!traced_ok(ev)) return {};
    auto it = fds_.find(a.handle2());
    if (it == fds_.end()) {
      fail(ev, EBADF, "fdopen of a descriptor the replay does not have");
      return {};
    }
    if (it->second.owner == Owner::self) {
      fd = it->second.fd;
      it->second.owner = Owner::stream;
      taken = &it->second;
    } else {  // a shared sink (stdout) or a descriptor another stream has: a copy of our own
      fd = ::fcntl(it->second.fd, F_DUPFD_CLOEXEC, 0);
    }
  } else {
    const std::string* path = mapped(a.file());
    fd = path ? target_.sandbox->open(*path, flags, 0666) : -ENOENT;
  }
  if (fd < 0) {
    if (traced_ok(ev)) fail(ev, -fd, "fopen");
    return {};
  }
  FILE* fp = ::fdopen(fd, stdio_mode(flags));
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

}  // namespace mpior::replay
