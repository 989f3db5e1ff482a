// Mappings under UCX's memory hooks. UCX keeps its registration cache valid
// by hooking mmap, munmap, mremap, madvise, shmat, shmdt and brk (ucm, in
// libucm, loaded by MPICH's ch4:ucx and Open MPI's UCX PML). In its default
// mode (bistro) ucm overwrites the first instructions of the function it
// finds under each name with a jump to its own, which makes the system call
// itself; with the tracer preloaded that function is the tracer's wrapper,
// which then never runs. In its other mode (reloc) ucm points every object's
// relocation entries at its own functions, which call the next definition,
// the wrapper or libc's. Either way ucm runs its event handlers around each
// call: the tracer subscribes to them (ucm_set_event_handler with
// UCM_EVENT_FLAG_NO_INSTALL, so no hook is installed that UCX did not
// install) and records the call there with the mapping handlers
// (mmap_handlers.cpp), the call itself made by ucm as before. A signal
// handler's mapping call is recorded too: nested when it landed in the
// program's call, deferred (signal_stash.cpp) when it interrupted the
// tracer. A call that runs through the wrapper as well is recorded once: by
// ucm's events when ucm called the wrapper as the original function, by the
// wrapper when the wrapper called into a patched libc.
#include "preload/ucm_bridge.hpp"

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/types.h>

#include <atomic>
#include <cstring>
#include <new>

#include "preload/fd_table.hpp"
#include "preload/log.hpp"
#include "preload/signals.hpp"
#include "preload/unwinder.hpp"
#include "preload/wrapper_support.hpp"

namespace mpior::preload {

namespace {

// ucm's interface (ucm/api/ucm.h, unchanged since UCX 1.3): the events and
// the parts of ucm_event_t the tracer reads.
enum : int {
  kUcmMmap = 1 << 0,
  kUcmMunmap = 1 << 1,
  kUcmMremap = 1 << 2,
  kUcmNoInstall = 1 << 24,
};
union UcmEvent {
  struct {
    void* result;
    void* address;
    size_t size;
    int prot;
    int flags;
    int fd;
    off_t offset;
  } mmap;
  struct {
    int result;
    void* address;
    size_t size;
  } munmap;
  struct {
    void* result;
    void* address;
    size_t old_size;
    size_t new_size;
    int flags;
  } mremap;
};
using UcmCallback = void (*)(int type, UcmEvent* event, void* arg);
using UcmSetHandler = int (*)(int events, int priority, UcmCallback cb, void* arg);
using UcmUnsetHandler = void (*)(int events, UcmCallback cb, void* arg);

// Priorities: below 0 runs before the original function, 0 is the call.
constexpr int kBeforeCall = -1, kAfterCall = 1;

std::atomic<bool> g_attached{false};
const void* g_ucm_base = nullptr;  // libucm's load address: its frames are not the call site

// The calls ucm's events are recording on this thread, each between the
// event before it and the one after it (a Call lives in `call`). A stack: a
// signal handler's mapping call made while the program's is in the kernel
// opens and closes its own above it (one slot would close the program's
// record with the handler's call and lose the program's).
struct OpenEvent {
  alignas(Call) unsigned char call[sizeof(Call)];
  const UcmEvent* event;  // ucm's, one per call (on its stack), handed to both handlers: 0 while opening
  uint8_t depth;          // the thread's call depth inside this call
};
constexpr int kMaxOpen = 4;  // a handler interrupting a handler's call interrupting the program's...
struct OpenEvents {
  OpenEvent at[kMaxOpen];
  int n;
};
constinit thread_local OpenEvents t_open __attribute__((tls_model("initial-exec"))) = {};

trace::Kind kind_of(int type) {
  return type == kUcmMmap ? trace::Kind::mmap : type == kUcmMunmap ? trace::Kind::munmap : trace::Kind::mremap;
}

// Only mappings of traced files, and unmappings (MAP_FIXED over a range
// unmaps it) while one exists, are worth a record: malloc's anonymous
// mappings pass after one check.
bool concerns_traced_file(int type, const UcmEvent& e) noexcept {
  if (type != kUcmMmap || (e.mmap.flags & MAP_FIXED)) return map_any();
  return e.mmap.fd >= 0 && !(e.mmap.flags & MAP_ANONYMOUS) && fds().traced(e.mmap.fd);
}

// Whether to record the call ucm is about to make. A signal handler's call
// that interrupted the tracer (which may hold the mapping table's lock or be
// halfway through the fd table) is recorded too: its handler is deferred
// (signal_stash.cpp), so every file mapping and every unmapping is taken
// without a look at either table, and those not of traced files are dropped
// later.
bool wanted(int type, const UcmEvent& e, bool in_handler) noexcept {
  if (!in_handler) return concerns_traced_file(type, e);
  return type != kUcmMmap || (e.mmap.flags & MAP_FIXED) || (e.mmap.fd >= 0 && !(e.mmap.flags & MAP_ANONYMOUS));
}

void before_call(int type, UcmEvent* e, void*) {
  ThreadState& t = t_state;
  const bool in_handler = t.in_tracer == kInTracerSignal;
  if ((t.in_tracer && !in_handler) || !g_recording.load(std::memory_order_relaxed)) return;
  if (t_open.n == kMaxOpen || (t.depth != 0 && t_map_wrapper_depth == t.depth && !in_handler)) return;
  if (!wanted(type, *e, in_handler)) return;
  // The slot is taken first: a handler's call landing from here on opens above it.
  OpenEvent& o = t_open.at[t_open.n++];
  o.event = nullptr;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  Call* c = new (o.call) Call(kind_of(type), true);
  if (!c->active()) {
    c->~Call();
    --t_open.n;
    return;
  }
  o.depth = t.depth;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  o.event = e;
  if (type == kUcmMunmap && !in_handler)
    map_before_unmap(*c, e->munmap.address, e->munmap.size);
  else if (type != kUcmMmap)
    map_capture(*c);
}

// The deferred handler's arguments (signal_stash.cpp's run_handler).
void defer(Call& c, int type, const UcmEvent& e) noexcept {
  auto n = [](auto v) { return int64_t(reinterpret_cast<intptr_t>(v)); };
  if (type == kUcmMmap)
    defer_call(c, Deferred::map,
               {n(e.mmap.result),
                {int64_t(e.mmap.size), e.mmap.prot, e.mmap.flags, e.mmap.fd, e.mmap.offset},
                nullptr,
                nullptr,
                nullptr});
  else if (type == kUcmMunmap)
    defer_call(c, Deferred::unmap,
               {e.munmap.result, {n(e.munmap.address), int64_t(e.munmap.size)}, nullptr, nullptr, nullptr});
  else
    defer_call(c, Deferred::remap,
               {n(e.mremap.result),
                {n(e.mremap.address), int64_t(e.mremap.new_size), int64_t(e.mremap.old_size)},
                nullptr,
                nullptr,
                nullptr});
}

// The program's return address: the first frame outside libucm and the
// tracer (ucm's handlers run a few frames below the program's call).
uint64_t program_call_site() noexcept {
  void* frames[16];
  int n = unwinder::backtrace(frames, 16);
  Dl_info own{};
  dladdr(reinterpret_cast<void*>(&program_call_site), &own);
  for (int i = 1; i < n; ++i) {
    Dl_info info{};
    if (!dladdr(frames[i], &info)) return reinterpret_cast<uint64_t>(frames[i]);
    if (info.dli_fbase != g_ucm_base && info.dli_fbase != own.dli_fbase) return reinterpret_cast<uint64_t>(frames[i]);
  }
  return 0;
}

void after_call(int type, UcmEvent* e, void*) {
  // Only the call whose event opened it: a handler's call that interrupted
  // it closed its own above it, and one made while the tracer worked (after
  // this call's end too) opened none.
  if (t_open.n == 0 || t_open.at[t_open.n - 1].event != e) return;
  OpenEvent& o = t_open.at[t_open.n - 1];
  Call& c = *std::launder(reinterpret_cast<Call*>(o.call));
  c.stop();  // inside the tracer from here on: a handler's call is deferred, not opened above this one
  if (t_state.signal_stash)
    defer(c, type, *e);
  else if (type == kUcmMmap)
    map_fd(c, e->mmap.result, e->mmap.size, e->mmap.prot, e->mmap.flags, e->mmap.fd, e->mmap.offset);
  else if (type == kUcmMunmap)
    map_unmap(c, e->munmap.result, e->munmap.address, e->munmap.size);
  else
    map_remap(c, e->mremap.result, e->mremap.address, e->mremap.old_size, e->mremap.new_size);
  if (!c.dropped() && !t_state.signal_stash) c.ev().callsite = program_call_site();
  c.~Call();
  std::atomic_signal_fence(std::memory_order_seq_cst);
  --t_open.n;  // the slot held the Call until here: a handler's call meanwhile opened above it
}

void attach() noexcept {
  if (g_attached.load(std::memory_order_acquire)) return;
  // Only a libucm already loaded: the tracer never loads UCX itself.
  void* lib = dlopen("libucm.so.0", RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) return;
  auto set = reinterpret_cast<UcmSetHandler>(dlsym(lib, "ucm_set_event_handler"));
  auto unset = reinterpret_cast<UcmUnsetHandler>(dlsym(lib, "ucm_unset_event_handler"));
  if (!set || !unset) return;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(set), &info)) g_ucm_base = info.dli_fbase;
  // UCX_MEM_EVENTS=no: ucm refuses, installs nothing, and the wrappers see
  // every call themselves.
  const int events = kUcmMmap | kUcmMunmap | kUcmMremap | kUcmNoInstall;
  if (g_attached.exchange(true)) return;
  if (set(events, kBeforeCall, before_call, nullptr) != 0) {
    g_attached.store(false);
    log_debug("ucm events not available: mappings are traced by the wrappers alone");
    return;
  }
  if (set(events, kAfterCall, after_call, nullptr) != 0) {  // a call opened before it would never close
    unset(events & ~kUcmNoInstall, before_call, nullptr);
    g_attached.store(false);
    return;
  }
  log_debug("ucm events subscribed: mappings made under UCX's memory hooks are traced");
}

// Where the jump another runtime wrote over a function's first bytes goes
// (jmp rel32; movabs r11 + jmp *r11, ucm's and Open MPI's far form), or
// nullptr: the function is as compiled.
const void* patched_to(const unsigned char* p) noexcept {
  if (p[0] == 0xe9) {
    int32_t rel;
    std::memcpy(&rel, p + 1, 4);
    return p + 5 + rel;
  }
  if (p[0] == 0x49 && p[1] == 0xbb && p[10] == 0x41 && p[11] == 0xff && p[12] == 0xe3) {
    const void* to;
    std::memcpy(&to, p + 2, 8);
    return to;
  }
  return nullptr;
}

// A wrapper another runtime overwrote, other than ucm's whose events are
// subscribed, loses every call made through it: said once per name.
void warn_patched_wrappers() noexcept {
  static std::atomic<bool> warned[4];
  const char* names[4] = {"mmap", "munmap", "mremap", "msync"};
  Dl_info own{};
  if (!dladdr(reinterpret_cast<void*>(&warn_patched_wrappers), &own)) return;
  for (int i = 0; i < 4; ++i) {
    void* fn = dlsym(RTLD_DEFAULT, names[i]);
    Dl_info info{}, by{};
    if (!fn || !dladdr(fn, &info) || info.dli_fbase != own.dli_fbase) continue;
    const void* to = patched_to(static_cast<const unsigned char*>(fn));
    if (!to || (g_attached.load() && dladdr(to, &by) && by.dli_fbase == g_ucm_base)) continue;
    if (!warned[i].exchange(true))
      log_warn("{} is overwritten by {}: the tracer does not see the calls made through it", names[i],
               dladdr(to, &by) && by.dli_fname ? by.dli_fname : "another runtime");
  }
}

}  // namespace

bool map_not_in_ucm_event() noexcept {
  ThreadState& t = t_state;
  // ucm calling the wrapper as the original function of the call its event opened.
  const OpenEvent* top = t_open.n != 0 ? &t_open.at[t_open.n - 1] : nullptr;
  if (top && top->event && top->depth == t.depth) return false;
  bool records = !t.in_tracer && g_recording.load(std::memory_order_relaxed) && t.depth < 255;
  t_map_wrapper_depth = records ? uint8_t(t.depth + 1) : 0;
  return true;
}

void ucm_bridge_attach() noexcept {
  TracerGuard guard;
  attach();
  warn_patched_wrappers();
}

}  // namespace mpior::preload
