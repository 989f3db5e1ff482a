// Records of calls a signal handler made while its thread was inside the
// tracer (signals.cpp), kept aside until the thread is out of the handler
// and records again. The handler appends with no lock and no allocator:
// blocks come from the kernel (mmap), as many as needed, since a thread may
// wait inside the tracer (for a lock, a file write) while a timer interrupts
// it every few microseconds. The thread takes the whole list with signals
// blocked for that moment, runs the handlers of the calls deferred (opens,
// closes, reads and writes, stdio: the file and fd tables change in the
// order the calls were made, after the tracer's work the signal interrupted),
// records each in its place and unmaps the blocks.
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iterator>

#include "preload/call.hpp"
#include "preload/log.hpp"
#include "preload/recorder.hpp"
#include "preload/signals.hpp"
#include "preload/wrapper_support.hpp"

namespace mpior::preload {

namespace {

// One call: its record, and for a deferred one its handler's arguments,
// followed by the path and fopen mode it named (NUL-terminated).
struct Entry {
  trace::RawEvent ev;
  int32_t err;      // the errno the call left, for its handler
  uint16_t bytes;   // the entry with its text, a multiple of 8
  Deferred op;      // none: ev is the record
  uint8_t dropped;  // the handler did not record the call
  int64_t ret;
  int64_t a[5];
  const void* stream;
  char* text() noexcept { return reinterpret_cast<char*>(this + 1); }
};
// A path longer than the kernel takes failed anyway; the mode is short.
constexpr size_t kMaxText = PATH_MAX + 16;

struct Block {
  static constexpr size_t kBytes = 64 * 1024;
  static constexpr size_t kData = kBytes - 2 * sizeof(void*);
  Block* next;
  size_t used;  // bytes of data
  alignas(8) unsigned char data[kData];
};
static_assert(sizeof(Block) <= Block::kBytes && sizeof(Entry) + kMaxText < Block::kData);

// Past this much a thread's records are counted as lost.
constexpr size_t kMaxBlocks = 1024;

struct List {
  Block* head;
  Block* tail;
  size_t blocks;
};
constinit thread_local List t_stash __attribute__((tls_model("initial-exec"))) = {nullptr, nullptr, 0};
std::atomic<uint64_t> g_lost{0};
// Per kind: calls of signal handlers inside the tracer that no handler records there.
std::atomic<uint64_t> g_lost_kind[trace::kNumKinds];

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

// In the signal handler: room for an entry with `text` bytes after it, or
// nullptr (counted lost).
Entry* stash_entry(const trace::RawEvent& ev, size_t text) noexcept {
  size_t bytes = (sizeof(Entry) + text + 7) & ~size_t(7);
  List& l = t_stash;
  if (!l.tail || l.tail->used + bytes > Block::kData) {
    Block* b = l.blocks < kMaxBlocks ? new_block() : nullptr;
    if (!b) {
      g_lost.fetch_add(1, std::memory_order_relaxed);
      lost_in_handler(trace::Kind(ev.kind));
      return nullptr;
    }
    (l.tail ? l.tail->next : l.head) = b;
    l.tail = b;
    ++l.blocks;
  }
  Entry* e = reinterpret_cast<Entry*>(l.tail->data + l.tail->used);
  l.tail->used += bytes;
  e->ev = ev;
  e->bytes = uint16_t(bytes);
  e->op = Deferred::none;
  e->dropped = 0;
  t_state.stashed = 1;
  return e;
}

void stash(const trace::RawEvent& ev) noexcept { stash_entry(ev, 0); }

size_t text_len(const char* s) noexcept {
  size_t n = 0;
  while (s && s[n] && n <= kMaxText) ++n;
  return n;
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

// The calls' records, in the order they were made (the dropped left out).
template <typename F>
void each(Block* list, F&& f) noexcept {
  for (Block* b = list; b; b = b->next)
    for (size_t at = 0; at < b->used;) {
      Entry* e = reinterpret_cast<Entry*>(b->data + at);
      at += e->bytes;
      if (!e->dropped) f(e->ev);
    }
}

// The deferred call's handler, as the wrapper would have run it.
void run_handler(Call& c, Entry& e) noexcept {
  FILE* stream = static_cast<FILE*>(const_cast<void*>(e.stream));
  const char* path = e.text();
  switch (e.op) {
    case Deferred::open:
      return open_at(c, e.ret, int(e.a[0]), path, int(e.a[1]), e.a[2]);
    case Deferred::close:
      return close_fd(c, e.ret, int(e.a[0]));
    case Deferred::fd_io:
      return fd_io(c, e.ret, int(e.a[0]), e.a[1], e.a[2]);
    case Deferred::fd_seek:
      return fd_seek(c, e.ret, int(e.a[0]), e.a[1], int(e.a[2]));
    case Deferred::stream_open:
      return stream_open(c, stream, path, path + strlen(path) + 1);
    case Deferred::stream_close:
      return stream_close(c, e.ret, stream);
    case Deferred::stream_io:
      return stream_io(c, e.ret, stream, e.a[0], e.a[1]);
    case Deferred::map:
      return map_fd(c, reinterpret_cast<void*>(e.ret), size_t(e.a[0]), int(e.a[1]), int(e.a[2]), int(e.a[3]), e.a[4]);
    case Deferred::unmap:  // the dirty pages were not looked at before: the bound (map_unmap)
      return map_unmap(c, e.ret, reinterpret_cast<void*>(e.a[0]), size_t(e.a[1]));
    case Deferred::remap:
      return map_remap(c, reinterpret_cast<void*>(e.ret), reinterpret_cast<void*>(e.a[0]), size_t(e.a[2]),
                       size_t(e.a[1]));
    case Deferred::none:
      return;
  }
}

// Runs the deferred handlers, in the order of the calls.
void run_deferred(Block* list) noexcept {
  for (Block* b = list; b; b = b->next)
    for (size_t at = 0; at < b->used;) {
      Entry* e = reinterpret_cast<Entry*>(b->data + at);
      at += e->bytes;
      if (e->op == Deferred::none) continue;
      Call c(e->ev, e->err);
      run_handler(c, *e);
      e->dropped = c.dropped();
      e->ev = c.ev();
      e->op = Deferred::none;
    }
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
  run_deferred(list);
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
  run_deferred(list);
  each(list, [depth](trace::RawEvent& e) {
    e.depth = std::min(e.depth, depth);
    record_now(e);
  });
  release(list);
}

void defer_call(Call& c, Deferred op, const DeferredArgs& args) noexcept {
  c.drop();
  size_t path = text_len(args.path), mode = text_len(args.mode);
  if (path > PATH_MAX || mode > 15) return lost_in_handler(c.ev().kind);
  Entry* e = stash_entry(c.ev(), path + mode + 2);
  if (!e) return;
  e->err = c.saved_errno();
  e->op = op;
  e->ret = args.ret;
  std::copy(std::begin(args.a), std::end(args.a), e->a);
  e->stream = args.stream;
  char* text = e->text();
  if (path) std::memcpy(text, args.path, path);
  text[path] = 0;
  if (mode) std::memcpy(text + path + 1, args.mode, mode);
  text[path + 1 + mode] = 0;
}

void lost_in_handler(trace::Kind k) noexcept {
  if (g_recording.load(std::memory_order_relaxed)) g_lost_kind[size_t(k)].fetch_add(1, std::memory_order_relaxed);
}

void report_signal_losses() noexcept {
  std::string list;
  uint64_t total = 0;
  for (size_t k = 0; k < trace::kNumKinds; ++k)
    if (uint64_t n = g_lost_kind[k].load(std::memory_order_relaxed)) {
      total += n;
      list += (list.empty() ? "" : ", ") + std::string(trace::name(trace::Kind(k))) + " " + std::to_string(n);
    }
  if (total) log_warn("{} calls of signal handlers that interrupted the tracer were not recorded: {}", total, list);
}

trace::KindTallies signal_unrecorded_tallies() noexcept {
  trace::KindTallies out{};
  for (size_t k = 0; k < trace::kNumKinds; ++k) out[k].calls = g_lost_kind[k].load(std::memory_order_relaxed);
  return out;
}

void stash_thread_start() noexcept {
  resolved_once(g_syscall, "syscall");
  pthread_once(&g_exit_key_once, [] { pthread_key_create(&g_exit_key, at_thread_exit); });
  pthread_setspecific(g_exit_key, &g_exit_key);
}

}  // namespace mpior::preload
