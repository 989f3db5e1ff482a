// Recording hooks for POSIX AIO. A request lives in a small table keyed by
// its aiocb from submit until the program learns it finished; then one
// mpior_aio_done record, nested under the call that told the program, carries
// what it did. glibc's aio_error and aio_return read the aiocb's
// __error_code and __return_value: the tracer reads them the same way, so it
// never consumes the result the program will ask for.
#include <aio.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

#include "files.hpp"
#include "log.hpp"
#include "wrapper_support.hpp"

namespace mpior::preload {

using namespace trace;

static_assert(LIO_READ == kAioRead && LIO_WRITE == kAioWrite && LIO_NOP == kAioNop);
static_assert(sizeof(struct aiocb) == sizeof(struct aiocb64));

namespace {

struct Request {
  int64_t id = 0;
  int fd = -1;
  int32_t file = -1;
  int64_t offset = 0;
  int64_t count = 0;
  int64_t op = 0;
  uint8_t depth = 0;
  Kind kind{};  // the submitting call (aio_write64 or lio_listio ...)
};

// Requests in flight, keyed by their aiocb: open addressing, lock-free. A
// slot's key goes empty -> busy -> aiocb -> busy -> tomb -> busy -> aiocb ...
// (never back to empty, so a probe stops at the first empty slot); whoever
// moves it to busy by CAS owns the fields until it publishes the next key.
// One round (submit, suspend, return) costs a few atomic operations, no lock.
class AioTable {
 public:
  static constexpr size_t kSlots = 4096;

  // Registers a request; false when the table is full (it goes untraced).
  bool add(const struct aiocb* cb, const Request& r) {
    size_t h = hash(cb);
    for (size_t i = 0; i < kSlots; ++i) {
      Slot& e = slots_[(h + i) % kSlots];
      uintptr_t k = e.key.load(std::memory_order_acquire);
      if ((k == kEmpty || k == kTomb) && e.key.compare_exchange_strong(k, kBusy, std::memory_order_acquire)) {
        e.r = r;
        live_.fetch_add(1, std::memory_order_relaxed);
        e.key.store(reinterpret_cast<uintptr_t>(cb), std::memory_order_release);
        return true;
      }
    }
    return false;
  }

  // Removes the request of cb into out; false when cb is not in flight.
  bool take(const struct aiocb* cb, Request& out) {
    if (!cb || live_.load(std::memory_order_relaxed) == 0) return false;
    Slot* e = find(cb);
    if (!e) return false;
    return take_slot(*e, reinterpret_cast<uintptr_t>(cb), out);
  }

  bool holds(const struct aiocb* cb) { return cb && live_.load(std::memory_order_relaxed) != 0 && find(cb); }

  // Takes every request on fd (at its close), calling f(cb, request) for each.
  template <typename F>
  void take_fd(int fd, F&& f) {
    if (live_.load(std::memory_order_relaxed) == 0) return;
    for (Slot& e : slots_) {
      uintptr_t k = e.key.load(std::memory_order_acquire);
      // A glance at the fd (relaxed: the slot's owner may be filling it),
      // checked again once the slot is ours.
      if (k <= kBusy || __atomic_load_n(&e.r.fd, __ATOMIC_RELAXED) != fd) continue;
      if (!e.key.compare_exchange_strong(k, kBusy, std::memory_order_acquire)) continue;
      if (e.r.fd != fd) {
        e.key.store(k, std::memory_order_release);
        continue;
      }
      Request r = e.r;
      live_.fetch_sub(1, std::memory_order_relaxed);
      e.key.store(kTomb, std::memory_order_release);
      f(reinterpret_cast<const struct aiocb*>(k), r);
    }
  }
  template <typename F>
  void take_all(F&& f) {
    if (live_.load(std::memory_order_relaxed) == 0) return;
    for (Slot& e : slots_) {
      uintptr_t k = e.key.load(std::memory_order_acquire);
      Request r;
      if (k > kBusy && take_slot(e, k, r)) f(reinterpret_cast<const struct aiocb*>(k), r);
    }
  }

  int64_t next_id() { return next_id_.fetch_add(1, std::memory_order_relaxed); }

 private:
  static constexpr uintptr_t kEmpty = 0, kTomb = 1, kBusy = 2;
  struct Slot {
    std::atomic<uintptr_t> key{kEmpty};
    Request r;
  };

  Slot* find(const struct aiocb* cb) {
    uintptr_t want = reinterpret_cast<uintptr_t>(cb);
    size_t h = hash(cb);
    for (size_t i = 0; i < kSlots; ++i) {
      Slot& e = slots_[(h + i) % kSlots];
      uintptr_t k = e.key.load(std::memory_order_acquire);
      if (k == want) return &e;
      if (k == kEmpty) return nullptr;
    }
    return nullptr;
  }
  bool take_slot(Slot& e, uintptr_t k, Request& out) {
    if (!e.key.compare_exchange_strong(k, kBusy, std::memory_order_acquire)) return false;
    out = e.r;
    live_.fetch_sub(1, std::memory_order_relaxed);
    e.key.store(kTomb, std::memory_order_release);
    return true;
  }
  static size_t hash(const aiocb* p) { return (reinterpret_cast<uintptr_t>(p) >> 4) % kSlots; }

  std::atomic<int64_t> live_{0};
  std::atomic<int64_t> next_id_{1};
  Slot slots_[kSlots];
};

AioTable& table() {
  static auto* t = new AioTable();
  return *t;
}

uint8_t child_depth(const Call& c) { return uint8_t(c.ev().depth < 254 ? c.ev().depth + 1 : 255); }

// The request's result as aio_error and aio_return would give it.
bool finished(const struct aiocb* cb, int& err, int64_t& bytes) {
  err = __atomic_load_n(&cb->__error_code, __ATOMIC_ACQUIRE);
  if (err == EINPROGRESS) return false;
  bytes = int64_t(cb->__return_value);
  return true;
}

// A request's completion record (time, depth and call site set by the caller).
RawEvent done_event(const Request& r, int err, int64_t bytes) noexcept {
  RawEvent ev;
  ev.kind = Kind::mpior_aio_done;
  ev.args[arg::handle] = r.fd;
  ev.args[arg::file] = r.file;
  ev.args[arg::offset] = r.offset;
  ev.args[arg::count] = r.count;
  ev.args[arg::lio_op] = r.op;
  ev.args[arg::submit_depth] = r.depth;
  ev.args[arg::submit_kind] = int64_t(r.kind);
  ev.args[arg::aio_req] = r.id;
  ev.ret = err ? -1 : bytes;
  ev.err = err;
  return ev;
}

void record_done(Call& c, const Request& r, int err, int64_t bytes) noexcept {
  RawEvent ev = done_event(r, err, bytes);
  ev.depth = child_depth(c);
  ev.start = ev.end = c.ev().end;
  ev.callsite = c.ev().callsite;
  record_event(ev);
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
// as having moved all its bytes, as glibc's helper thread will.
void orphan_result(const struct aiocb* cb, const Request& r, int& err, int64_t& bytes) noexcept {
  int e = EINPROGRESS;
  ssize_t n = -1;
  struct iovec local[2] = {{&e, sizeof e}, {&n, sizeof n}};
  struct iovec remote[2] = {{const_cast<int*>(&cb->__error_code), sizeof e},
                            {const_cast<ssize_t*>(&cb->__return_value), sizeof n}};
  bool read = process_vm_readv(getpid(), local, 2, remote, 2, 0) == ssize_t(sizeof e + sizeof n);
  err = 0, bytes = r.count;
  if (!read || e == EINPROGRESS) return;
  if (e == 0 && n >= 0 && n <= r.count) bytes = n;
  if (e > 0 && e < 4096 && n == -1) err = e, bytes = -1;
}

// Fills the submit slots from cb and registers the request; false when cb's
// fd is not a traced file.
bool submit(Call& c, RawEvent& ev, const struct aiocb* cb, int64_t op, bool accepted) noexcept {
  if (!cb) return false;
  FdTable::Slot* slot = fds().traced(cb->aio_fildes);
  if (!slot) return false;
  // An aiocb given again: its last request finished (POSIX forbids reuse
  // before), so the program knows; that completion comes first.
  learn(c, cb);
  Request r;
  r.id = table().next_id();
  r.fd = cb->aio_fildes;
  r.file = slot->file.load(std::memory_order_relaxed);
  r.offset = op == kAioSync ? 0 : int64_t(cb->aio_offset);
  r.count = op == kAioSync ? 0 : int64_t(cb->aio_nbytes);
  r.op = op;
  r.depth = c.ev().depth;
  r.kind = c.ev().kind;
  ev.args[arg::handle] = r.fd;
  ev.args[arg::file] = r.file;
  ev.args[arg::offset] = r.offset;
  ev.args[arg::count] = r.count;
  ev.args[arg::lio_op] = op;
  ev.args[arg::aio_req] = accepted ? r.id : 0;
  if (!accepted) return true;
  if (!table().add(cb, r)) log_once_error("more than 4096 AIO requests in flight; the rest are not traced");
  return true;
}

}  // namespace

void aio_submit(Call& c, int64_t ret, const struct aiocb* cb, int64_t op) noexcept {
  if (!submit(c, c.ev(), cb, op, ret == 0)) return c.drop();
  c.ev().ret = ret;
  if (op == kAioSync) c.ev().args[arg::mode] = 0;
  c.failed_if(ret != 0);
}

void aio_list(Call& c, int64_t ret, int mode, const struct aiocb* const* list, int nent) noexcept {
  auto& ev = c.ev();
  ev.args[arg::handle] = -1;
  ev.args[arg::file] = -1;
  ev.args[arg::count] = nent;
  ev.args[arg::flags] = mode;
  ev.ret = ret;
  c.failed_if(ret != 0);
  if (!list || nent <= 0) return;
  // With LIO_NOWAIT a failed call may still have queued some entries; their
  // error status says which (EINPROGRESS or done): glibc sets it at enqueue.
  bool any = false;
  for (int i = 0; i < nent; ++i) {
    const struct aiocb* cb = list[i];
    if (!cb || cb->aio_lio_opcode == LIO_NOP) continue;
    RawEvent sub;
    sub.kind = Kind::mpior_aio_op;
    sub.depth = child_depth(c);
    sub.start = sub.end = c.ev().end;
    sub.callsite = c.ev().callsite;
    int err = __atomic_load_n(&cb->__error_code, __ATOMIC_ACQUIRE);
    bool queued = ret == 0 || err == EINPROGRESS || err == 0;
    if (!submit(c, sub, cb, cb->aio_lio_opcode, queued)) continue;
    sub.ret = queued ? 0 : -1;
    sub.err = queued ? 0 : err;
    record_event(sub);
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
  ev.args[arg::handle] = cb->aio_fildes;
  ev.args[arg::file] = slot ? slot->file.load(std::memory_order_relaxed) : -1;
  ev.ret = ret;  // the request's error status: 0, EINPROGRESS, ECANCELED, an errno
  c.failed_if(ret < 0);
  if (ret != EINPROGRESS) learn(c, cb);
}

void aio_return_of(Call& c, int64_t ret, const struct aiocb* cb) noexcept {
  if (!cb) return c.drop();
  FdTable::Slot* slot = fds().traced(cb->aio_fildes);
  if (!slot && !table().holds(cb)) return c.drop();
  auto& ev = c.ev();
  ev.args[arg::handle] = cb->aio_fildes;
  ev.args[arg::file] = slot ? slot->file.load(std::memory_order_relaxed) : -1;
  ev.ret = ret;
  c.failed_if(ret < 0);
  learn(c, cb);
}

void aio_wait(Call& c, int64_t ret, const struct aiocb* const* list, int nent) noexcept {
  auto& ev = c.ev();
  ev.args[arg::handle] = -1;
  ev.args[arg::file] = -1;
  ev.args[arg::count] = nent;
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
  ev.args[arg::handle] = fd;
  ev.args[arg::file] = slot->file.load(std::memory_order_relaxed);
  ev.args[arg::flags] = cb != nullptr;  // one request or every request on fd
  ev.ret = ret;
  c.failed_if(ret < 0);
  if (ret == AIO_ALLDONE && cb) learn(c, cb);
}

void aio_fd_closed(Call& c, int fd) noexcept {
  table().take_fd(fd, [&](const struct aiocb* cb, const Request& r) {
    int err;
    int64_t bytes;
    orphan_result(cb, r, err, bytes);
    record_done(c, r, err, bytes);
  });
}

void aio_record_orphans() noexcept {
  table().take_all([](const struct aiocb* cb, const Request& r) {
    int err;
    int64_t bytes;
    orphan_result(cb, r, err, bytes);
    RawEvent ev = done_event(r, err, bytes);
    ev.start = ev.end = clock::now();
    record_event(ev);
  });
}

}  // namespace mpior::preload
