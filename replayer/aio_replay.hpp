// One replay thread's AIO requests: the traced submits reissued as the
// program issued them, POSIX requests with aio_read/aio_write/aio_fsync,
// libaio's with the kernel's own AIO (io_submit: glibc's AIO runs one file's
// requests one at a time on a helper thread, the kernel's run together), kept
// in flight until the record of the traced completion, where the replay waits
// for them as the program did.
#pragma once

#include <aio.h>
#include <linux/aio_abi.h>

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
  ~AioReplay();
  AioReplay(const AioReplay&) = delete;
  AioReplay& operator=(const AioReplay&) = delete;

  // Submits request `id` (trace::kAioRead, kAioWrite or kAioSync) on fd;
  // buf holds at least count bytes; kernel: through the kernel's AIO (where
  // it has none for this thread, through POSIX AIO). Returns 0 or an errno.
  int submit(int64_t id, int fd, int64_t op, int64_t offset, int64_t count, char* buf, bool kernel = false);
  // Waits for request `id` and returns its result: bytes done, or -errno.
  // false when the replay has no such request (its submit was not replayed).
  bool complete(int64_t id, int64_t& result);
  // Waits for every request still in flight (end of the thread, or a close).
  void drain();

 private:
  static int64_t wait_for(aiocb& cb);
  int submit_kernel(int64_t id, int fd, int64_t op, int64_t offset, int64_t count, char* buf);
  bool reap_kernel(long at_least);  // moves finished kernel requests to kernel_done_
  std::unordered_map<int64_t, std::unique_ptr<aiocb>> pending_;
  aio_context_t kernel_ctx_ = 0;
  bool kernel_failed_ = false;  // io_setup failed: POSIX AIO for all
  std::unordered_map<int64_t, std::unique_ptr<iocb>> kernel_pending_;
  std::unordered_map<int64_t, int64_t> kernel_done_;  // id -> result, reaped before asked for
};

}  // namespace mpior::replay
