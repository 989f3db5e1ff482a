// Recording hooks for Linux's native AIO through libaio (fio's libaio
// engine, databases). Requests share POSIX AIO's table and records
// (aio_requests.hpp), keyed by the program's iocb: io_submit is a list whose
// entries the kernel took, io_getevents hands back completions (the iocb and
// its result in an io_event), io_cancel one of them, io_destroy waits for the
// rest. libaio returns -errno and leaves errno alone.
#include <libaio.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "preload/aio_requests.hpp"
#include "preload/fd_table.hpp"
#include "preload/log.hpp"
#include "preload/wrapper_support.hpp"
#include "trace/arg_setters.hpp"

namespace mpior::preload {

using namespace trace;
using aio::Request;
using aio::table;

namespace real {

namespace {
// A system call's result as libaio gives it: -errno, errno untouched.
int kernel_result(long r, int saved_errno) noexcept {
  int out = r < 0 ? -errno : int(r);
  errno = saved_errno;
  return out;
}
}  // namespace

int sys_io_submit(io_context_t ctx, long nr, struct iocb* ios[]) noexcept {
  int e = errno;
  return kernel_result(syscall(SYS_io_submit, ctx, nr, ios), e);
}
int sys_io_getevents(io_context_t ctx, long min_nr, long nr, struct io_event* events,
                     struct timespec* timeout) noexcept {
  int e = errno;
  return kernel_result(syscall(SYS_io_getevents, ctx, min_nr, nr, events, timeout), e);
}
int sys_io_pgetevents(io_context_t ctx, long min_nr, long nr, struct io_event* events, struct timespec* timeout,
                      sigset_t* sigmask) noexcept {
  struct {
    const sigset_t* mask;
    size_t size;
  } sigset = {sigmask, _NSIG / 8};
  int e = errno;
  return kernel_result(syscall(SYS_io_pgetevents, ctx, min_nr, nr, events, timeout, &sigset), e);
}
int sys_io_cancel(io_context_t ctx, struct iocb* iocb, struct io_event* evt) noexcept {
  int e = errno;
  return kernel_result(syscall(SYS_io_cancel, ctx, iocb, evt), e);
}
int sys_io_destroy(io_context_t ctx) noexcept {
  int e = errno;
  return kernel_result(syscall(SYS_io_destroy, ctx), e);
}

}  // namespace real

namespace {

uint64_t context_id(io_context_t ctx) { return reinterpret_cast<uint64_t>(ctx); }

// The request an iocb asks for (op -1: polls and no-ops, which move no bytes
// of a file). A vector's bytes are its iovecs' lengths.
int64_t request_of(const struct iocb* cb, int64_t& offset, int64_t& count) {
  offset = 0, count = 0;
  switch (cb->aio_lio_opcode) {
    case IO_CMD_PREAD:
    case IO_CMD_PWRITE:
      offset = cb->u.c.offset;
      count = int64_t(cb->u.c.nbytes);
      return cb->aio_lio_opcode == IO_CMD_PREAD ? kAioRead : kAioWrite;
    case IO_CMD_PREADV:
    case IO_CMD_PWRITEV:
      offset = cb->u.v.offset;
      for (unsigned long i = 0; cb->u.v.vec && i < std::min<unsigned long>(cb->u.v.nr, IOV_MAX); ++i)
        count += int64_t(cb->u.v.vec[i].iov_len);
      return cb->aio_lio_opcode == IO_CMD_PREADV ? kAioRead : kAioWrite;
    case IO_CMD_FSYNC:
    case IO_CMD_FDSYNC:
      return kAioSync;
    default:
      return -1;
  }
}

// A request of cb on a traced file, or false.
bool traced_request(const Call& c, io_context_t ctx, const struct iocb* cb, Request& r) {
  if (!cb) return false;
  r.op = request_of(cb, r.offset, r.count);
  if (r.op < 0) return false;
  FdTable::Slot* slot = fds().traced(cb->aio_fildes);
  if (!slot) return false;
  r.fd = cb->aio_fildes;
  r.file = slot->file.load(std::memory_order_relaxed);
  r.ctx = context_id(ctx);
  r.depth = c.ev().depth;
  r.kind = c.ev().kind;
  return true;
}

void no_file(Call& c, int64_t ret, int64_t count) {
  auto& ev = c.ev();
  auto a = aio_args_mut(ev);
  a.handle() = -1;
  a.file() = -1;
  a.count() = count;
  ev.ret = ret;
  ev.err = ret < 0 ? int(-ret) : 0;
}

}  // namespace

// The kernel took the first ret entries (none when ret < 0); the call is kept
// when any entry names a traced file.
void kaio_submit(Call& c, int64_t ret, io_context_t ctx, long nr, struct iocb** ios) noexcept {
  no_file(c, ret, nr);
  bool any = false;
  for (long i = 0; ios && i < nr; ++i) {
    Request r;
    if (!traced_request(c, ctx, ios[i], r)) continue;
    any = true;
    if (i >= ret) continue;
    // An iocb given again finished before (the kernel forbids reuse while in
    // flight): a completion the program reaped some way the tracer missed.
    Request stale;
    if (table().take(ios[i], stale)) aio::record_done(c, stale, 0, stale.count);
    r.id = table().next_id();
    aio::record_op(c, r, true, 0);
    if (!table().add(ios[i], r)) log_once_error("more than 4096 AIO requests in flight; the rest are not traced");
  }
  if (!any) c.drop();
}

// Each event carries its iocb and result (bytes, or -errno).
void kaio_getevents(Call& c, int64_t ret, io_context_t, const struct io_event* events) noexcept {
  no_file(c, ret, ret);
  bool any = false;
  for (int64_t i = 0; events && i < ret; ++i) {
    Request r;
    if (!table().take(events[i].obj, r)) continue;
    auto res = static_cast<long>(events[i].res);
    aio::record_done(c, r, res < 0 ? int(-res) : 0, res < 0 ? -1 : res);
    any = true;
  }
  if (!any) c.drop();
}

void kaio_cancel(Call& c, int64_t ret, io_context_t, const struct iocb* cb, const struct io_event* evt) noexcept {
  if (!cb || !table().holds(cb)) return c.drop();
  no_file(c, ret, 1);
  auto a = aio_args_mut(c.ev());
  a.handle() = cb->aio_fildes;
  a.cancel_one() = 1;
  Request r;
  if (ret == 0 && evt && table().take(cb, r)) {
    auto res = static_cast<long>(evt->res);
    aio::record_done(c, r, res < 0 ? int(-res) : 0, res < 0 ? -1 : res);
  }
}

// The kernel waited for the context's requests; their results are gone with
// it: each counts all its bytes.
void kaio_destroy(Call& c, int64_t ret, io_context_t ctx) noexcept {
  no_file(c, ret, 0);
  bool any = false;
  table().take_where(&Request::ctx, context_id(ctx), [&](const void*, const Request& r) {
    aio::record_done(c, r, 0, r.count);
    any = true;
  });
  if (!any) c.drop();
}

}  // namespace mpior::preload
