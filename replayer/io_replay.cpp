#include "replayer/io_replay.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <type_traits>

#include "replayer/io_replay_ops.hpp"
#include "replayer/pacing_clock.hpp"
#include "trace/arg_views.hpp"

namespace mpior::replay {
namespace {

using io_ops::traced_ok;
using trace::Event;
using trace::OpClass;

bool fatal_for_target(int err) { return err == ENOSPC || err == EDQUOT || err == EROFS; }

}  // namespace

IoReplay::IoReplay(const Target& target, const trace::Plan& plan, int32_t rank, ErrorLog& errors, Progress& progress,
                   std::string who)
    : target_(target),
      buffer_(target.buffer_of(rank)),
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

// F on the descriptor or stream the call named: a member gives the outcome,
// a system call of io_replay_ops.hpp 0, or -1 with errno.
template <auto F, class H>
IoOutcome IoReplay::run(const Event& ev, H target) {
  if constexpr (std::is_member_function_pointer_v<decltype(F)>) {
    return (this->*F)(ev, target);
  } else {
    if (F(file_args(ev), target) < 0) fail(ev, errno);
    return {};
  }
}

template <auto F>
IoOutcome IoReplay::on_fd(const Event& ev) {
  if (!traced_ok(ev)) return {false, 0};
  int fd = fd_for(ev);
  if (fd >= 0) return run<F>(ev, fd);
  fail(ev, -fd, "fd " + std::to_string(io_args(ev).handle()) + " is not open in the replay");
  return {};
}

template <auto F>
IoOutcome IoReplay::on_stream(const Event& ev) {
  if (!traced_ok(ev)) return {false, 0};
  if (FILE* fp = stream_for(ev)) return run<F>(ev, fp);
  fail(ev, EBADF, "stream " + std::to_string(io_args(ev).handle()) + " is not open in the replay");
  return {};
}

template <auto F>
IoOutcome IoReplay::on_path(const Event& ev) {
  const std::string* path = mapped(io_args(ev).file());
  if (!path) {
    if (traced_ok(ev)) fail(ev, ENOENT, "file id outside the plan");
    return {};
  }
  int r;
  if constexpr (std::is_member_function_pointer_v<decltype(F)>)
    r = (this->*F)(ev, *path);
  else
    r = F(*target_.sandbox, ev, *path);
  if (r < 0 && traced_ok(ev)) fail(ev, -r);
  return {};
}

template <IoReplay::Call F>
IoOutcome IoReplay::unless_failed(const Event& ev) {
  return traced_ok(ev) ? (this->*F)(ev) : IoOutcome{false, 0};
}

// fflush(NULL) flushed every stream of the traced process.
IoOutcome IoReplay::flush(const Event& ev) {
  if (io_args(ev).handle() != -1) return on_stream<io_ops::stream_flush>(ev);
  return traced_ok(ev) ? flush_all(ev) : IoOutcome{false, 0};
}

// Each kind's call by its family, op class and facts (kind_table.hpp): a
// kind added to a list is replayed as the others of its op class (and
// facts) are; a new op class or family fails the build here until it is
// given a call (or `nothing_to_reissue`).
constexpr KindTable<IoReplay::Call> IoReplay::calls() {
  using F = trace::Family;
  using Op = OpClass;
  using T = IoReplay;
  namespace fact = trace::fact;
  namespace ops = io_ops;
  return kind_table<Call>({
      {F::posix, Op::open, &T::open_file},
      {F::posix, Op::close, &T::unless_failed<&T::close_fd>},
      {F::posix, Op::copy, &T::unless_failed<&T::copy>},
      {F::posix, Op::read, &T::on_fd<&T::transfer_fd>},
      {F::posix, Op::write, &T::on_fd<&T::transfer_fd>},
      {F::posix, Op::seek, &T::on_fd<ops::fd_seek>},
      {F::posix, Op::sync, &T::on_fd<ops::fd_sync>},
      {F::posix, Op::sync, &T::on_fd<ops::fd_datasync>, fact::datasync},
      {F::posix, Op::sync, &T::on_fd<ops::fd_syncfs>, fact::whole_fs},
      {F::posix, Op::sync, &T::on_fd<ops::fd_sync_range>, fact::ranged},
      {F::posix, Op::advise, &T::on_fd<ops::fd_advise>},
      {F::posix, Op::advise, &T::on_fd<ops::fd_readahead>, fact::readahead},
      {F::posix, Op::allocate, &T::on_fd<ops::fd_allocate>},
      {F::posix, Op::allocate, &T::on_fd<ops::fd_posix_allocate>, fact::returns_errno},
      {F::posix, Op::truncate, &T::on_fd<ops::fd_truncate>},
      {F::posix, Op::truncate, &T::on_path<ops::path_truncate>, fact::by_path},
      {F::posix, Op::stat, &T::on_path<ops::path_stat>},
      {F::posix, Op::stat, &T::on_fd<ops::fd_stat>, fact::by_fd},
      {F::posix, Op::dup, &T::on_fd<&T::dup_fd>},
      {F::posix, Op::unlink, &T::on_path<&T::unlink_path>},
      {F::posix, Op::rename, &T::on_path<&T::rename_path>},
      {F::posix, Op::link, &T::on_path<&T::link_path>},
      {F::posix, Op::mkdir, &T::on_path<ops::path_mkdir>},
      {F::posix, Op::rmdir, &T::on_path<ops::path_rmdir>},
      {F::posix, Op::access, &T::on_path<ops::path_access>},
      {F::posix, Op::opendir, &T::on_path<&T::open_dir>},
      {F::posix, Op::opendir, &T::unless_failed<&T::fdopen_dir>, fact::by_fd},
      {F::posix, Op::readdir, &T::unless_failed<&T::read_dir>},
      {F::posix, Op::closedir, &T::unless_failed<&T::close_dir>},
      {F::posix, Op::process, &T::unless_failed<&T::nothing_to_reissue>},
      {F::stdio, Op::fopen, &T::open_stream},
      {F::stdio, Op::fopen, &T::fdopen_stream, fact::by_fd},
      {F::stdio, Op::fclose, &T::unless_failed<&T::close_stream>},
      {F::stdio, Op::read, &T::on_stream<&T::transfer_stream>},
      {F::stdio, Op::write, &T::on_stream<&T::transfer_stream>},
      {F::stdio, Op::seek, &T::on_stream<ops::stream_seek>},
      {F::stdio, Op::tell, &T::on_stream<ops::stream_tell>},
      {F::stdio, Op::sync, &T::flush},
      {F::mmap, Op::map, &T::unless_failed<&T::map_new>},
      {F::mmap, Op::unmap, &T::unless_failed<&T::map_end>},
      {F::mmap, Op::msync, &T::unless_failed<&T::map_sync>},
      {F::mmap, Op::remap, &T::unless_failed<&T::map_move>},
      {F::aio, Op::asubmit, &T::unless_failed<&T::aio_submit>},
      {F::aio, Op::alist, &T::unless_failed<&T::by_records>},
      {F::aio, Op::atest, &T::unless_failed<&T::by_records>},
      {F::aio, Op::await, &T::unless_failed<&T::by_records>},
      {F::aio, Op::acancel, &T::unless_failed<&T::by_records>},
      {F::aio, Op::adone, &T::unless_failed<&T::by_records>},
      {F::mpi, std::nullopt, &T::not_file_work},
      {F::mpiio, std::nullopt, &T::not_file_work},
      {F::internal, std::nullopt, &T::not_file_work},
  });
}

IoOutcome IoReplay::replay(const Event& ev) {
  static constexpr auto kCalls = calls();
  static_assert(every_kind_handled(kCalls), "a kind of trace/api/*.list has no file system replay: register one");
  static_assert(no_kind_claimed_twice(kCalls), "a kind of trace/api/*.list has the facts of two file system replays");
  const bool two_files = trace::has_fact(ev.kind, trace::fact::two_files);
  sizes_.posix(ev, traced_ok(ev), global_file(io_args(ev).file()), two_files ? global_file(file_args(ev).file2()) : -1);
  if (times_itself(ev)) return (this->*kCalls[size_t(ev.kind)])(ev);
  // Timed here, around the call alone: the engine's own time around it is
  // not the file system's (on tmpfs a stat takes about as long).
  int64_t began = mono_now_ns();
  IoOutcome r = (this->*kCalls[size_t(ev.kind)])(ev);
  if (r.replayed) r.end_ns = mono_now_ns(), r.call_ns = std::max<int64_t>(1, r.end_ns - began);
  return r;
}

bool IoReplay::times_itself(const Event& ev) {
  OpClass op = ev.op();
  trace::Family family = trace::info(ev.kind).family;
  return (op == OpClass::read || op == OpClass::write) && traced_ok(ev) &&
         (family == trace::Family::posix || family == trace::Family::stdio);
}

}  // namespace mpior::replay
