#include "replayer/aio_replay.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "trace/event.hpp"
#include "trace/kind.hpp"
#include "trace/model.hpp"

namespace mpior::replay {

namespace {
// A thread's kernel AIO context holds this many requests at once (the
// machine's fs.aio-max-nr bounds all contexts together: 65536 by default).
constexpr unsigned kKernelQueue = 128;
}  // namespace

AioReplay::~AioReplay() {
  drain();
  if (kernel_ctx_) syscall(SYS_io_destroy, kernel_ctx_);
}

int AioReplay::submit(int64_t id, int fd, int64_t op, int64_t offset, int64_t count, char* buf, bool kernel) {
  if (op != trace::kAioRead && op != trace::kAioWrite && op != trace::kAioSync) return 0;  // LIO_NOP
  if (kernel && !kernel_failed_ && !kernel_ctx_ && syscall(SYS_io_setup, kKernelQueue, &kernel_ctx_) != 0) {
    kernel_ctx_ = 0;
    kernel_failed_ = true;
  }
  if (kernel && kernel_ctx_) return submit_kernel(id, fd, op, offset, count, buf);
  if (auto old = pending_.find(id); old != pending_.end()) {  // an id seen twice: finish the first
    wait_for(*old->second);
    pending_.erase(old);
  }
  auto cb = std::make_unique<aiocb>();
  std::memset(cb.get(), 0, sizeof(aiocb));
  cb->aio_fildes = fd;
  cb->aio_offset = off_t(offset);
  cb->aio_nbytes = size_t(count);
  cb->aio_buf = buf;
  cb->aio_sigevent.sigev_notify = SIGEV_NONE;
  int r;
  if (op == trace::kAioRead)
    r = ::aio_read(cb.get());
  else if (op == trace::kAioWrite)
    r = ::aio_write(cb.get());
  else
    r = ::aio_fsync(O_SYNC, cb.get());
  if (r != 0) return errno;
  pending_.emplace(id, std::move(cb));
  return 0;
}

int64_t AioReplay::wait_for(aiocb& cb) {
  const aiocb* list[1] = {&cb};
  while (::aio_error(&cb) == EINPROGRESS) ::aio_suspend(list, 1, nullptr);
  int err = ::aio_error(&cb);
  ssize_t r = ::aio_return(&cb);
  return err ? -err : int64_t(r);
}

int AioReplay::submit_kernel(int64_t id, int fd, int64_t op, int64_t offset, int64_t count, char* buf) {
  if (kernel_pending_.count(id)) {  // an id seen twice: finish the first
    int64_t ignored;
    complete(id, ignored);
  }
  auto cb = std::make_unique<iocb>();
  std::memset(cb.get(), 0, sizeof(iocb));
  cb->aio_data = uint64_t(id);
  cb->aio_lio_opcode = op == trace::kAioRead    ? IOCB_CMD_PREAD
                       : op == trace::kAioWrite ? IOCB_CMD_PWRITE
                                                : IOCB_CMD_FSYNC;
  cb->aio_fildes = uint32_t(fd);
  if (op != trace::kAioSync) {  // the kernel refuses an fsync with a buffer, offset or length
    cb->aio_buf = uint64_t(reinterpret_cast<uintptr_t>(buf));
    cb->aio_nbytes = uint64_t(count);
    cb->aio_offset = offset;
  }
  iocb* list[1] = {cb.get()};
  for (;;) {
    if (syscall(SYS_io_submit, kernel_ctx_, 1, list) == 1) break;
    // The context is full (more requests in flight than the program had,
    // or than kKernelQueue): one must finish first.
    if (errno == EAGAIN && !kernel_pending_.empty() && reap_kernel(1)) continue;
    if (errno == EINTR) continue;
    return errno;
  }
  kernel_pending_.emplace(id, std::move(cb));
  return 0;
}

bool AioReplay::reap_kernel(long at_least) {
  io_event events[64];
  long n;
  do {
    n = syscall(SYS_io_getevents, kernel_ctx_, at_least, 64, events, nullptr);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return false;
  for (long i = 0; i < n; ++i) {
    auto id = int64_t(events[i].data);
    kernel_pending_.erase(id);
    kernel_done_[id] = events[i].res;
  }
  return true;
}

bool AioReplay::complete(int64_t id, int64_t& result) {
  if (kernel_ctx_) {
    while (kernel_pending_.count(id) && reap_kernel(1)) {
    }
    if (auto done = kernel_done_.find(id); done != kernel_done_.end()) {
      result = done->second;
      kernel_done_.erase(done);
      return true;
    }
  }
  auto it = pending_.find(id);
  if (it == pending_.end()) return false;
  result = wait_for(*it->second);
  pending_.erase(it);
  return true;
}

bool plan_uses_aio(const trace::Plan& plan) {
  for (const trace::Stream& s : plan.streams)
    for (const trace::Leaf& l : s.leaves)
      if (trace::info(l.kind).family == trace::Family::aio) return true;
  return false;
}

void AioReplay::drain() {
  for (auto& [id, cb] : pending_) wait_for(*cb);
  pending_.clear();
  while (!kernel_pending_.empty() && reap_kernel(1)) {
  }
  kernel_pending_.clear();
  kernel_done_.clear();
}

}  // namespace mpior::replay
