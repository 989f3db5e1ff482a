// A 32-bit atomic as a futex word: the replay's start gate and its
// barriers' sleepers wait on one and are woken by one system call.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <ctime>

namespace mpior::replay {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "a futex word");

// Sleeps while `word` holds `value`, at most timeout_ns when it is positive.
// False once the timeout passed; spurious returns are true (callers loop).
inline bool futex_wait(std::atomic<uint32_t>& word, uint32_t value, int64_t timeout_ns = 0) {
  timespec ts{time_t(timeout_ns / 1000000000), long(timeout_ns % 1000000000)};
  long r = syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, value,
                   timeout_ns > 0 ? &ts : nullptr, nullptr, 0);
  return !(r == -1 && errno == ETIMEDOUT);
}

// Wakes up to `count` threads waiting on `word`.
inline void futex_wake(std::atomic<uint32_t>& word, int count = INT_MAX) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

}  // namespace mpior::replay
