// Recording hooks for stdio calls. Stream ids stand for FILE* (0-2 are stdin,
// stdout, stderr); the byte count of a call is what it moved, so printf-style
// calls record their output length.
#include "preload/fd_table.hpp"
#include "preload/signals.hpp"
#include "preload/wrapper_support.hpp"
#include "trace/arg_setters.hpp"

namespace mpior::preload {

using namespace trace;

namespace {

void fill(Call& c, const StreamTable::Entry& e) {
  auto& ev = c.ev();
  auto a = file_args_mut(ev);
  a.handle() = e.id;
  a.file() = e.file;
}

}  // namespace

void stream_open(Call& c, FILE* ret, const char* path, const char* mode) noexcept {
  if (__builtin_expect(t_state.signal_stash, 0)) return defer_call(c, Deferred::stream_open, {0, {}, ret, path, mode});
  const AbsolutePath abs(AT_FDCWD, path);
  int fd = ret ? fileno(ret) : -1;
  if (abs.empty() || is_excluded(abs.view())) {
    if (fd >= 0) fds().set(fd, kFdNotTraced, 0);
    return abs.empty() ? c.drop() : c.drop_excluded();
  }
  int64_t flags = flags_of_mode(mode);
  int32_t file = files().intern(abs.view(), flags);
  auto& ev = c.ev();
  auto a = file_args_mut(ev);
  a.handle() = -1;
  a.file() = file;
  a.flags() = flags;
  ev.ret = ret != nullptr;
  c.failed_if(!ret);
  if (!ret) return;
  fds().set(fd, file, 0);
  if (auto* e = streams().add(ret, file, fd, 0)) a.handle() = e->id;
}

// glibc's tmpfile makes an unnamed file in P_tmpdir (O_TMPFILE, or a
// name it unlinks at once; TMPDIR is ignored), all through internal calls
// the tracer never sees: recorded as the O_TMPFILE open it stands for, so its
// stream's bytes count (on the directory, as for any O_TMPFILE open) and the
// replay makes an unnamed file there too.
void stream_tmpfile(Call& c, FILE* ret) noexcept {
  static constexpr char kDir[] = P_tmpdir;
  int fd = ret ? fileno(ret) : -1;
  if (is_excluded(kDir)) {
    if (fd >= 0) fds().set(fd, kFdNotTraced, 0);
    return c.drop_excluded();
  }
  constexpr int64_t kFlags = O_RDWR | O_TMPFILE;
  int32_t file = files().intern(kDir, kFlags);
  auto& ev = c.ev();
  auto a = file_args_mut(ev);
  a.handle() = -1;
  a.file() = file;
  a.flags() = kFlags;
  a.mode() = 0600;
  ev.ret = ret != nullptr;
  c.failed_if(!ret);
  if (!ret) return;
  fds().set(fd, file, 0);
  if (auto* e = streams().add(ret, file, fd, 0)) a.handle() = e->id;
}

void stream_fdopen(Call& c, FILE* ret, int fd, const char* mode) noexcept {
  FdTable::Slot* slot = fds().traced(fd);
  if (!slot) return c.drop();
  auto& ev = c.ev();
  auto a = file_args_mut(ev);
  a.handle() = -1;
  a.file() = slot->file.load();
  a.flags() = flags_of_mode(mode);
  a.handle2() = fd;
  ev.ret = ret != nullptr;
  c.failed_if(!ret);
  if (!ret) return;
  if (auto* e = streams().add(ret, slot->file.load(), fd, slot->pos.load())) a.handle() = e->id;
}

void stream_reopen(Call& c, FILE* ret, const char* path, const char* mode, FILE* old) noexcept {
  streams().remove(old);
  if (!path) return c.drop();  // freopen(NULL, ...) changes the mode only
  stream_open(c, ret, path, mode);
}

void stream_close(Call& c, int64_t ret, FILE* stream) noexcept {
  if (__builtin_expect(t_state.signal_stash, 0))
    return defer_call(c, Deferred::stream_close, {ret, {}, stream, nullptr, nullptr});
  StreamTable::Entry* e = streams().traced(stream);
  if (!e) {
    streams().remove(stream);
    return c.drop();
  }
  fill(c, *e);
  fds().forget(e->fd);
  streams().remove(stream);
  c.ev().ret = ret;
  c.failed_if(ret != 0);
}

// The scanf family: the bytes consumed are how far the stream moved (its
// return value counts conversions).
void stream_scan(Call& c, int64_t ret, FILE* stream) noexcept {
  StreamTable::Entry* e = streams().traced(stream);
  if (!e) return c.drop();
  fill(c, *e);
  int64_t before = e->pos.load(std::memory_order_relaxed);
  int64_t now = ftello(stream);
  int64_t bytes = now >= before ? now - before : 0;
  if (now >= 0) e->pos.store(now, std::memory_order_relaxed);
  auto& ev = c.ev();
  auto a = file_args_mut(ev);
  a.offset() = before;
  a.count() = expr::kUnknownCount;
  ev.ret = bytes;
  c.failed_if(ret == EOF && bytes == 0);
}

void stream_plain(Call& c, int64_t ret, FILE* stream) noexcept {
  if (!stream) {  // fflush(NULL): every stream
    auto a = file_args_mut(c.ev());
    a.handle() = -1;
    a.file() = -1;
    c.ev().ret = ret;
    return c.failed_if(ret != 0);
  }
  StreamTable::Entry* e = streams().traced(stream);
  if (!e) return c.drop();
  fill(c, *e);
  c.ev().ret = ret;
  c.failed_if(ret < 0);
}

void stream_seek(Call& c, int64_t ret, FILE* stream, int64_t offset, int whence) noexcept {
  StreamTable::Entry* e = streams().traced(stream);
  if (!e) return c.drop();
  fill(c, *e);
  e->pos.store(ftello(stream), std::memory_order_relaxed);
  auto& ev = c.ev();
  auto a = file_args_mut(ev);
  a.offset() = offset;
  a.flags() = whence;
  ev.ret = ret;
  c.failed_if(ret < 0);
}

}  // namespace mpior::preload
