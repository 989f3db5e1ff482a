// Records of calls a signal handler made while its thread was inside the
// tracer (signals.cpp), kept aside until the thread is out of the handler
// and records again. The handler appends with no lock and no allocator:
// blocks come from the kernel (mmap), as many as needed, since a thread may
// wait inside the tracer (for a lock, a file write) while a timer interrupts
// it every few microseconds. The thread takes the whole list with signals
// blocked for that moment, records each in its place and unmaps the blocks.
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "preload/call.hpp"
#include "preload/log.hpp"
#include "preload/recorder.hpp"
#include "preload/signals.hpp"
#include "preload/wrapper_support.hpp"

namespace mpior::preload {

namespace {

struct Block {
  static constexpr size_t kBytes = 64 * 1024;
  static constexpr unsigned kEvents = (kBytes - 2 * sizeof(void*)) / sizeof(trace::RawEvent);
  Block* next;
  unsigned used;
  trace::RawEvent ev[kEvents];
};
static_assert(sizeof(Block) <= Block::kBytes);

// Past this much a thread's records are counted as lost.
constexpr size_t kMaxBlocks = 1024;

struct List {
  Block* head;
  Block* tail;
  size_t blocks;
};
constinit thread_local List t_stash __attribute__((tls_model("initial-exec"))) = {nullptr, nullptr, 0};
std::atomic<uint64_t> g_lost{0};

// libc's syscall(), resolved outside signal handlers (stash_thread_start):
// the system calls themselves, as mmap may be UCX's or the tracer's wrapper.
using SyscallFn = long (*)(long, ...);
std::atomic<SyscallFn> g_syscall{nullptr};

Block* new_block() noexcept {
  SyscallFn sys = g_syscall.load(std::memory_order_relaxed);
  if (!sys) return nullptr;
  long p = sys(SYS_mmap, nullptr, Block::kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == -1) return nullptr;
  Block* b = reinterpret_cast<Block*>(p);
  b->next = nullptr;
  b->used = 0;
  return b;
}

// In the signal handler.
void stash(const trace::RawEvent& ev) noexcept {
  List& l = t_stash;
  if (!l.tail || l.tail->used == Block::kEvents) {
    Block* b = l.blocks < kMaxBlocks ? new_block() : nullptr;
    if (!b) {
      g_lost.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    (l.tail ? l.tail->next : l.head) = b;
    l.tail = b;
    ++l.blocks;
  }
  l.tail->ev[l.tail->used++] = ev;
  t_state.stashed = 1;
}

// Takes this thread's stash (signals blocked meanwhile, so no handler
// appends halfway).
Block* take() noexcept {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  Block* head = t_stash.head;
  t_stash = {nullptr, nullptr, 0};
  t_state.stashed = 0;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return head;
}

template <typename F>
void each(Block* list, F&& f) noexcept {
  for (Block* b = list; b; b = b->next)
    for (unsigned i = 0; i < b->used; ++i) f(b->ev[i]);
}

void release(Block* list) noexcept {
  while (list) {
    Block* next = list->next;
    g_syscall.load(std::memory_order_relaxed)(SYS_munmap, list, Block::kBytes);
    list = next;
  }
}

// Said once, at the first record after a loss.
void warn_if_lost() noexcept {
  static std::atomic<bool> warned{false};
  if (g_lost.load(std::memory_order_relaxed) && !warned.exchange(true))
    log_warn("calls of signal handlers that interrupted the tracer were not recorded: no memory for them");
}

pthread_key_t g_exit_key;
pthread_once_t g_exit_key_once = PTHREAD_ONCE_INIT;

void at_thread_exit(void*) {
  if (g_recording.load(std::memory_order_relaxed)) drain_signal_records(0);
}

}  // namespace

void record_beside_stash(trace::RawEvent& ev) noexcept {
  if (t_state.signal_stash) return stash(ev);
  warn_if_lost();
  Block* list = take();
  // Before the call: what started before it, at most at its depth; then
  // what ran inside it (a handler during its real call or its handler's
  // work), nested; after it, at its depth, what started after it ended.
  auto before = [&ev](const trace::RawEvent& e) {
    return e.start < ev.start || (e.start <= ev.end && e.depth > ev.depth);
  };
  each(list, [&](trace::RawEvent& e) {
    if (!before(e)) return;
    if (e.start < ev.start) e.depth = std::min(e.depth, ev.depth);
    record_now(e);
  });
  record_now(ev);
  each(list, [&](trace::RawEvent& e) {
    if (before(e)) return;
    e.depth = ev.depth;
    record_now(e);
  });
  release(list);
}

void drain_signal_records(uint8_t depth) noexcept {
  TracerGuard guard;
  warn_if_lost();
  Block* list = take();
  each(list, [depth](trace::RawEvent& e) {
    e.depth = std::min(e.depth, depth);
    record_now(e);
  });
  release(list);
}

void stash_thread_start() noexcept {
  resolved_once(g_syscall, "syscall");
  pthread_once(&g_exit_key_once, [] { pthread_key_create(&g_exit_key, at_thread_exit); });
  pthread_setspecific(g_exit_key, &g_exit_key);
}

}  // namespace mpior::preload
