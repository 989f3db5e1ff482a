#include "replayer/thread_stacks.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

namespace mpior::replay {
namespace {

// ThreadSanitizer keeps its own per-thread state at the top of a stack it is
// given and refuses one under about 900 KiB ("pre-allocated stack size is
// insufficient"); untouched pages cost nothing, so its builds reserve more.
#if defined(__SANITIZE_THREAD__)
size_t least_stack() { return size_t(1) << 20; }
#else
size_t least_stack() { return size_t(PTHREAD_STACK_MIN); }  // sysconf: not a constant
#endif

}  // namespace

ThreadStacks::ThreadStacks(size_t count, size_t bytes) : count_(count) {
  guard_ = size_t(sysconf(_SC_PAGESIZE));
  size_t stack = (std::max<size_t>(bytes, least_stack()) + guard_ - 1) / guard_ * guard_;
  slot_ = stack + guard_;
  if (count == 0) return;
  // MAP_NORESERVE: pages a thread never touches cost neither memory nor swap.
  void* p = mmap(nullptr, slot_ * count, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (p == MAP_FAILED) return;
  base_ = static_cast<char*>(p);
  // Stacks grow down: a thread that overflows its own faults on the guard
  // page instead of writing into the stack below.
  for (size_t i = 0; i < count; ++i)
    if (mprotect(base_ + i * slot_, guard_, PROT_NONE) != 0) {
      munmap(base_, slot_ * count_);
      base_ = nullptr;
      return;
    }
}

ThreadStacks::~ThreadStacks() {
  if (base_) munmap(base_, slot_ * count_);
}

bool ThreadStacks::use(pthread_attr_t& attr, size_t i) const {
  if (!base_ || i >= count_) return false;
  return pthread_attr_setstack(&attr, base_ + i * slot_ + guard_, slot_ - guard_) == 0;
}

}  // namespace mpior::replay
