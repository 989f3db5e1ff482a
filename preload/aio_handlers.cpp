// Recording hooks for POSIX AIO (the request table: aio_requests.hpp, keyed
// by the aiocb). glibc's aio_error and aio_return read the aiocb's
// __error_code and __return_value: the tracer reads them the same way, so it
// never consumes the result the program will ask for.
#include <aio.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

#include "preload/aio_requests.hpp"
#include "preload/fd_table.hpp"
#include "preload/log.hpp"
#include "preload/wrapper_support.hpp"
#include "trace/arg_setters.hpp"

namespace mpior::preload {

using namespace trace;
using aio::Request;
using aio::table;

static_assert(LIO_READ == kAioRead && LIO_WRITE == kAioWrite && LIO_NOP == kAioNop);
static_assert(sizeof(struct aiocb) == sizeof(struct aiocb64));

namespace aio {

Table& table() {
  static auto* t = new Table();
  return *t;
}

namespace {
// A record of request r: its file slots, operation, submitting call and id.
RawEvent request_event(Kind kind, const Request& r) noexcept {
  RawEvent ev;
  ev.kind = kind;
  auto a = aio_args_mut(ev);
  a.handle() = r.fd;
  a.file() = r.file;
  a.offset() = r.offset;
  a.count() = r.count;
  a.lio_op() = r.op;
  a.submit_kind() = int64_t(r.kind);
  a.aio_req() = r.id;
  return ev;
}

// ev nested under c, at its end.
void record_nested(Call& c, RawEvent& ev) noexcept {
  ev.depth = child_depth(c);
  ev.start = ev.end = c.ev().end;
  ev.callsite = c.ev().callsite;
  record_event(ev);
}
}  // namespace

RawEvent done_event(const Request& r, int err, int64_t bytes) noexcept {
  RawEvent ev = request_event(Kind::mpior_aio_done, r);
  aio_args_mut(ev).submit_depth() = r.depth;
  ev.ret = err ? -1 : bytes;
  ev.err = err;
  return ev;
}

void record_done(Call& c, const Request& r, int err, int64_t bytes) noexcept {
  RawEvent ev = done_event(r, err, bytes);
  record_nested(c, ev);
}

void record_op(Call& c, const Request& r, bool accepted, int err) noexcept {
  RawEvent ev = request_event(Kind::mpior_aio_op, r);
  if (!accepted) aio_args_mut(ev).aio_req() = 0;
  ev.ret = accepted ? 0 : -1;
  ev.err = accepted ? 0 : err;
  record_nested(c, ev);
}

}  // namespace aio

namespace {

using aio::child_depth;
using aio::record_done;

// The request's result as aio_error and aio_return would give it.
bool finished(const struct aiocb* cb, int& err, int64_t& bytes) {
  err = __atomic_load_n(&cb->__error_code, __ATOMIC_ACQUIRE);
  if (err == EINPROGRESS) return false;
  bytes = int64_t(cb->__return_value);
  return true;
}

// The program learns cb finished: one completion record, once.
bool learn(Call& c, const struct aiocb* cb) noexcept {
  int err;
  int64_t bytes;
  if (!cb || !finished(cb, err, bytes)) return false;
  Request r;
  if (!table().take(cb, r)) return false;
  record_done(c, r, err, bytes);
  return true;
}

// The result of a request the program never asked about, read as safely as
// the tracer can: the aiocb may be gone (freed, or a stack frame reused), so
// it is read with process_vm_readv (no fault) and believed only when it is a
// plausible result; otherwise (still running, unreadable) the request counts
// as having moved all its bytes, as glibc's helper thread will. A libaio
// request's iocb holds no result: it counts all its bytes too.
void orphan_result(const void* key, const Request& r, int& err, int64_t& bytes) noexcept {
  err = 0, bytes = r.count;
  if (r.ctx != 0) return;
  auto* cb = static_cast<const struct aiocb*>(key);
  int e = EINPROGRESS;
  ssize_t n = -1;
  struct iovec local[2] = {{&e, sizeof e}, {&n, sizeof n}};
  struct iovec remote[2] = {{const_cast<int*>(&cb->__error_code), sizeof e},
                            {const_cast<ssize_t*>(&cb->__return_value), sizeof n}};
  bool read = process_vm_readv(getpid(), local, 2, remote, 2, 0) == ssize_t(sizeof e + sizeof n);
  if (!read || e == EINPROGRESS) return;
  if (e == 0 && n >= 0 && n <= r.count) bytes = n;
  if (e > 0 && e < 4096 && n == -1) err = e, bytes = -1;
}

// A request for cb, registered when accepted; false when cb's fd is not a
// traced file.
bool submit(Call& c, const struct aiocb* cb, int64_t op, bool accepted, Request& r) noexcept {
  if (!cb) return false;
  FdTable::Slot* slot = fds().traced(cb->aio_fildes);
  if (!slot) return false;
  // An aiocb given again: its last request finished (POSIX forbids reuse
  // before), so the program knows; that completion comes first.
  learn(c, cb);
  r.id = table().next_id();
  r.fd = cb->aio_fildes;
  r.file = slot->file.load(std::memory_order_relaxed);
  r.offset = op == kAioSync ? 0 : int64_t(cb->aio_offset);
  r.count = op == kAioSync ? 0 : int64_t(cb->aio_nbytes);
  r.op = op;
  r.depth = c.ev().depth;
  r.kind = c.ev().kind;
  if (accepted && !table().add(cb, r)) log_once_error("more than 4096 AIO requests in flight; the rest are not traced");
  return true;
}

}  // namespace

void aio_submit(Call& c, int64_t ret, const struct aiocb* cb, int64_t op) noexcept {
  Request r;
  if (!submit(c, cb, op, ret == 0, r)) return c.drop();
  auto& ev = c.ev();
  auto a = aio_args_mut(ev);
  a.handle() = r.fd;
  a.file() = r.file;
  a.offset() = r.offset;
  a.count() = r.count;
  a.lio_op() = op;
  a.aio_req() = ret == 0 ? r.id : 0;
  ev.ret = ret;
  c.failed_if(ret != 0);
}

void aio_list(Call& c, int64_t ret, int mode, const struct aiocb* const* list, int nent) noexcept {
  auto& ev = c.ev();
  auto a = aio_args_mut(ev);
  a.handle() = -1;
  a.file() = -1;
  a.count() = nent;
  a.list_mode() = mode;
  ev.ret = ret;
  c.failed_if(ret != 0);
  if (!list || nent <= 0) return;
  // With LIO_NOWAIT a failed call may still have queued some entries; their
  // error status says which (EINPROGRESS or done): glibc sets it at enqueue.
  bool any = false;
  for (int i = 0; i < nent; ++i) {
    const struct aiocb* cb = list[i];
    if (!cb || cb->aio_lio_opcode == LIO_NOP) continue;
    int err = __atomic_load_n(&cb->__error_code, __ATOMIC_ACQUIRE);
    bool queued = ret == 0 || err == EINPROGRESS || err == 0;
    Request r;
    if (!submit(c, cb, cb->aio_lio_opcode, queued, r)) continue;
    aio::record_op(c, r, queued, err);
    any = true;
  }
  if (!any) return c.drop();
  if (mode == LIO_WAIT)
    for (int i = 0; i < nent; ++i) learn(c, list[i]);
}

void aio_error_of(Call& c, int64_t ret, const struct aiocb* cb) noexcept {
  if (!cb) return c.drop();
  FdTable::Slot* slot = fds().traced(cb->aio_fildes);
  if (!slot && !table().holds(cb)) return c.drop();
  auto& ev = c.ev();
  auto a = aio_args_mut(ev);
  a.handle() = cb->aio_fildes;
  a.file() = slot ? slot->file.load(std::memory_order_relaxed) : -1;
  ev.ret = ret;  // the request's error status: 0, EINPROGRESS, ECANCELED, an errno
  c.failed_if(ret < 0);
  if (ret != EINPROGRESS) learn(c, cb);
}

void aio_return_of(Call& c, int64_t ret, const struct aiocb* cb) noexcept {
  if (!cb) return c.drop();
  FdTable::Slot* slot = fds().traced(cb->aio_fildes);
  if (!slot && !table().holds(cb)) return c.drop();
  auto& ev = c.ev();
  auto a = aio_args_mut(ev);
  a.handle() = cb->aio_fildes;
  a.file() = slot ? slot->file.load(std::memory_order_relaxed) : -1;
  ev.ret = ret;
  c.failed_if(ret < 0);
  learn(c, cb);
}

void aio_wait(Call& c, int64_t ret, const struct aiocb* const* list, int nent) noexcept {
  auto& ev = c.ev();
  auto a = aio_args_mut(ev);
  a.handle() = -1;
  a.file() = -1;
  a.count() = nent;
  ev.ret = ret;
  c.failed_if(ret != 0);
  // Learn first: a request learned is one this call waited for; a test of
  // table membership is needed only for those still running.
  bool any = false;
  for (int i = 0; list && i < nent; ++i) any = (ret == 0 && learn(c, list[i])) || any || table().holds(list[i]);
  if (!any) c.drop();
}

void aio_cancel_fd(Call& c, int64_t ret, int fd, const struct aiocb* cb) noexcept {
  FdTable::Slot* slot = fds().traced(fd);
  if (!slot) return c.drop();
  auto& ev = c.ev();
  auto a = aio_args_mut(ev);
  a.handle() = fd;
  a.file() = slot->file.load(std::memory_order_relaxed);
  a.cancel_one() = cb != nullptr;
  ev.ret = ret;
  c.failed_if(ret < 0);
  if (ret == AIO_ALLDONE && cb) learn(c, cb);
}

void aio_fd_closed(Call& c, int fd) noexcept {
  table().take_where(&Request::fd, fd, [&](const void* cb, const Request& r) {
    int err;
    int64_t bytes;
    orphan_result(cb, r, err, bytes);
    record_done(c, r, err, bytes);
  });
}

void aio_record_orphans() noexcept {
  table().take_all([](const void* cb, const Request& r) {
    int err;
    int64_t bytes;
    orphan_result(cb, r, err, bytes);
    RawEvent ev = done_event(r, err, bytes);
    ev.start = ev.end = clock::now();
    record_event(ev);
  });
}

}  // namespace mpior::preload
