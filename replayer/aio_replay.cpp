#include "aio_replay.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "event.hpp"
#include "kind.hpp"
#include "model.hpp"

namespace mpior::replay {

int AioReplay::submit(int64_t id, int fd, int64_t op, int64_t offset, int64_t count, char* buf) {
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
  else if (op == trace::kAioSync)
    r = ::aio_fsync(O_SYNC, cb.get());
  else
    return 0;  // LIO_NOP
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

bool AioReplay::complete(int64_t id, int64_t& result) {
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
}

}  // namespace mpior::replay
