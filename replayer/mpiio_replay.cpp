#include "replayer/mpiio_replay.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "trace/arg_views.hpp"

namespace mpior::replay {
namespace {

using trace::Event;
using trace::OpClass;
namespace fio = trace::fio;

}  // namespace

bool syncs_after(const Event& ev) {
  const trace::MpiioArgs a = mpiio_args(ev);
  int64_t flags = a.flags();
  if (!(flags & fio::kColl) || (flags & fio::kEnd)) return false;
  if (trace::has_fact(ev.kind, trace::fact::synchronises)) return true;
  return ev.op() == OpClass::mpiio_open && ((a.fextent() & O_CREAT) || (a.fextra() & kTracedDeleteOnClose));
}

int64_t SharedPointers::fetch_add(int32_t file, int64_t bytes, uint32_t views) {
  std::lock_guard lock(mu_);
  int64_t& p = next_[key(file, views)];
  int64_t at = p;
  p += bytes;
  return at;
}

void SharedPointers::set(int32_t file, int64_t at, uint32_t views) {
  std::lock_guard lock(mu_);
  next_[key(file, views)] = at;
}

MpiioReplay::~MpiioReplay() {
  for (auto& [id, h] : handles_)
    if (h.fd >= 0) ::close(h.fd);
}

void MpiioReplay::open(const Event& ev) {
  const trace::MpiioArgs a = mpiio_args(ev);
  if (ev.ret != 0) return;  // it failed when traced
  const std::string* path = io_.mapped(a.file());
  if (!path) return io_.fail(ev, ENOENT, "file id outside the plan");
  // Every rank creates: nothing orders the ranks' opens without ROMIO.
  int flags = int(a.fextent()) & ~O_EXCL;
  int fd = target_.sandbox->open(*path, flags, 0644);
  if (fd < 0) return io_.fail(ev, -fd, "MPI_File_open");
  Handle& h = handles_[a.handle()];
  if (h.fd >= 0) ::close(h.fd);
  h = Handle{fd, {}};
}

void MpiioReplay::remove(const Event& ev) {
  const std::string* path = io_.mapped(mpiio_args(ev).file());
  int r = path ? target_.sandbox->unlink(*path) : -ENOENT;
  if (r < 0 && ev.ret == 0) io_.fail(ev, -r, "MPI_File_delete");
}

// MPI_File_set_size sets the size; MPI_File_preallocate makes it at least that.
int MpiioReplay::resize(const Event& ev, const Handle& h) {
  const int64_t size = mpiio_args(ev).offset();
  if (!trace::has_fact(ev.kind, trace::fact::grows_only)) return ::ftruncate(h.fd, off_t(size));
  struct stat st {};
  return ::fstat(h.fd, &st) == 0 && st.st_size < size ? ::ftruncate(h.fd, off_t(size)) : 0;
}

void MpiioReplay::block(const Event& ev) {
  const trace::MpiioArgs a = mpiio_args(ev);
  if (a.handle() != view_handle_) return;
  auto it = handles_.find(view_handle_);
  if (it != handles_.end()) it->second.view.blocks.emplace_back(a.offset(), a.count());
}

int64_t MpiioReplay::replay(const Event& ev) {
  const trace::MpiioArgs a = mpiio_args(ev);
  OpClass op = ev.op();
  io_.sizes().mpiio(ev, io_.global_file(a.file()));
  if (op == OpClass::mpiio_open) {
    open(ev);
    return 0;
  }
  if (op == OpClass::mpiio_delete) {
    remove(ev);
    return 0;
  }
  auto it = handles_.find(a.handle());
  if (it == handles_.end() || ev.ret != 0) return 0;
  Handle& h = it->second;
  int r = 0;
  switch (op) {
    case OpClass::mpiio_close:
      ::close(h.fd);
      handles_.erase(it);
      return 0;
    case OpClass::mpiio_view:
      view_handle_ = a.handle();
      h.view = View{a.offset(), a.fextent(), std::max<int64_t>(1, a.fextra()), {}};
      ++h.views;
      if (a.flags() & fio::kUnflattened) h.view.extent = 0;  // contiguous from disp
      return 0;
    case OpClass::mpiio_size:
      r = resize(ev, h);
      break;
    case OpClass::mpiio_seek:
      if ((a.flags() & fio::kShared) && a.fextent() == SEEK_SET)
        shared_.set(io_.global_file(a.file()), a.offset() * h.view.etype, h.views);
      return 0;
    case OpClass::mpiio_sync:
      r = ::fsync(h.fd);
      break;
    case OpClass::mpiio_read:
    case OpClass::mpiio_write: {
      int64_t bytes = a.count();
      if (bytes <= 0 || (a.flags() & fio::kEnd)) return 0;
      int64_t at = a.offset();
      // The shared pointer moves by what every rank accessed through it; its
      // traced value is known only approximately (another rank may move it
      // between the tracer's look and the access), so the replay keeps its own.
      if (a.flags() & (fio::kShared | fio::kOrdered))
        at = h.view.disp + shared_.fetch_add(io_.global_file(a.file()), bytes, h.views);
      return transfer(ev, h, at, bytes);
    }
    default:
      return 0;
  }
  if (r < 0) io_.fail(ev, errno);
  return 0;
}

// `bytes` of data from byte `at` of the file on, through the view: the
// filetype's blocks tiled every extent bytes from the displacement.
int64_t MpiioReplay::transfer(const Event& ev, Handle& h, int64_t at, int64_t bytes) {
  bool write = ev.op() == OpClass::mpiio_write;
  const View& v = h.view;
  if (v.extent <= 0 || v.blocks.empty() || at < v.disp) return piece(ev, h.fd, write, at, bytes);
  int64_t rel = at - v.disp;
  int64_t tile = rel / v.extent, within = rel % v.extent;
  size_t b = 0;
  while (b < v.blocks.size() && v.blocks[b].first + v.blocks[b].second <= within) ++b;
  int64_t done = 0;
  while (done < bytes) {
    if (b == v.blocks.size()) {
      b = 0;
      ++tile;
      within = 0;
    }
    auto [off, len] = v.blocks[b];
    int64_t from = std::max(within, off);
    int64_t n = std::min(bytes - done, off + len - from);
    int64_t got = piece(ev, h.fd, write, v.disp + tile * v.extent + from, n);
    done += got;
    if (got < n) break;
    within = from + n;
    ++b;
  }
  return done;
}

int64_t MpiioReplay::piece(const Event& ev, int fd, bool write, int64_t at, int64_t n) {
  const IoBuffer& buf = io_.buffer();
  if (buf.size() == 0) return 0;
  int64_t done = 0;
  while (done < n) {
    size_t k = size_t(std::min<int64_t>(n - done, int64_t(buf.size())));
    ssize_t r = write ? ::pwrite(fd, buf.data(), k, off_t(at + done)) : ::pread(fd, buf.data(), k, off_t(at + done));
    if (r < 0) {
      io_.fail(ev, errno, std::to_string(n) + " bytes");
      break;
    }
    done += r;
    if (size_t(r) < k) break;  // end of file
  }
  return done;
}

}  // namespace mpior::replay
