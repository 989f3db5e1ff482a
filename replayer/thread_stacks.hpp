// The replay threads' stacks: one reservation for all of them.
#pragma once

#include <pthread.h>

#include <cstddef>

namespace mpior::replay {

// Stacks for `count` threads of `bytes` each, carved from one anonymous
// mapping with a guard page below each. With thousands of threads, glibc's own
// stacks cost an mmap and an mprotect at each creation and, beyond its small
// cache of stacks, an munmap at each exit: every munmap of a multithreaded
// process interrupts the other CPUs to flush their TLBs, so that ending
// thousands of threads cost more CPU than starting them. Here the pages are
// touched only where a thread uses them and unmapped once, after every
// thread ended.
class ThreadStacks {
 public:
  ThreadStacks(size_t count, size_t bytes);
  ~ThreadStacks();
  ThreadStacks(const ThreadStacks&) = delete;
  ThreadStacks& operator=(const ThreadStacks&) = delete;
  // Points `attr` at stack i; false once the stacks could not be reserved
  // (then `attr` keeps glibc's stacks of the size it was given).
  bool use(pthread_attr_t& attr, size_t i) const;

 private:
  char* base_ = nullptr;
  size_t count_ = 0;
  size_t slot_ = 0;   // a stack and the guard page below it
  size_t guard_ = 0;  // a page
};

}  // namespace mpior::replay
