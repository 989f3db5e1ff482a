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
// (mmap_handlers.cpp), the call itself made by ucm as before. A call that
// runs through the wrapper as well is recorded once: by ucm's events when
// ucm called the wrapper as the original function, by the wrapper when the
// wrapper called into a patched libc.
#include "preload/ucm_bridge.hpp"

#include <dlfcn.h>
#include <libunwind.h>
#include <sys/mman.h>
#include <sys/types.h>

#include <atomic>
#include <cstring>
#include <new>

#include "preload/fd_table.hpp"
#include "preload/log.hpp"
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

// The call ucm's events are recording on this thread, between the event
// before the call and the one after it (a Call lives in `call`).
struct OpenEvent {
  alignas(Call) unsigned char call[sizeof(Call)];
  int type;  // the ucm event; 0: none open
};
constinit thread_local OpenEvent t_open __attribute__((tls_model("initial-exec"))) = {{}, 0};

trace::Kind kind_of(int type) {
  return type == kUcmMmap ? trace::Kind::mmap : type == kUcmMunmap ? trace::Kind::munmap : trace::Kind::mremap;
}

// Only mappings of traced files, and unmappings while one exists, are
// worth a record: malloc's anonymous mappings pass after one check.
bool concerns_traced_file(int type, const UcmEvent& e) noexcept {
  if (type == kUcmMmap) return e.mmap.fd >= 0 && !(e.mmap.flags & MAP_ANONYMOUS) && fds().traced(e.mmap.fd);
  return map_any();
}

void before_call(int type, UcmEvent* e, void*) {
  ThreadState& t = t_state;
  if (t.in_tracer || t_open.type != 0 || (t.depth != 0 && t_map_wrapper_depth == t.depth)) return;
  if (!g_recording.load(std::memory_order_relaxed) || !concerns_traced_file(type, *e)) return;
  Call* c = new (t_open.call) Call(kind_of(type));
  if (!c->active()) {
    c->~Call();
    return;
  }
  t_open.type = type;
  if (type == kUcmMunmap) map_before_unmap(*c, e->munmap.address, e->munmap.size);
}

// The program's return address: the first frame outside libucm and the
// tracer (ucm's handlers run a few frames below the program's call).
uint64_t program_call_site() noexcept {
  void* frames[16];
  int n = unw_backtrace(frames, 16);
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
  if (t_open.type != type) return;
  Call& c = *std::launder(reinterpret_cast<Call*>(t_open.call));
  t_open.type = 0;
  c.stop();
  if (type == kUcmMmap)
    map_fd(c, e->mmap.result, e->mmap.size, e->mmap.prot, e->mmap.flags, e->mmap.fd, e->mmap.offset);
  else if (type == kUcmMunmap)
    map_unmap(c, e->munmap.result, e->munmap.address, e->munmap.size);
  else
    map_remap(c, e->mremap.result, e->mremap.address, e->mremap.new_size);
  if (!c.dropped()) c.ev().callsite = program_call_site();
  c.~Call();
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
  if (t_open.type != 0) return false;
  ThreadState& t = t_state;
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
