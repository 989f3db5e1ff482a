// One replay thread's POSIX AIO requests: the traced submits reissued with
// aio_read/aio_write/aio_fsync, kept in flight until the record of the traced
// completion, where the replay waits for them as the program did.
#pragma once

#include <aio.h>

#include <cstdint>
#include <memory>
#include <unordered_map>

namespace mpior::trace {
struct Plan;
}

namespace mpior::replay {

// Whether the plan has POSIX AIO calls: glibc's helper threads serve any
// thread's requests, so replay threads must then share one descriptor table.
bool plan_uses_aio(const trace::Plan& plan);

class AioReplay {
 public:
  AioReplay() = default;
  ~AioReplay() { drain(); }
  AioReplay(const AioReplay&) = delete;
  AioReplay& operator=(const AioReplay&) = delete;

  // Submits request `id` (trace::kAioRead, kAioWrite or kAioSync) on fd;
  // buf holds at least count bytes. Returns 0 or an errno.
  int submit(int64_t id, int fd, int64_t op, int64_t offset, int64_t count, char* buf);
  // Waits for request `id` and returns its result: bytes done, or -errno.
  // false when the replay has no such request (its submit was not replayed).
  bool complete(int64_t id, int64_t& result);
  // Waits for every request still in flight (end of the thread, or a close).
  void drain();

 private:
  static int64_t wait_for(aiocb& cb);
  std::unordered_map<int64_t, std::unique_ptr<aiocb>> pending_;
};

}  // namespace mpior::replay
