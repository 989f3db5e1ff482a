// The program's signal handlers run inside one of the tracer's, so that the
// calls they make are recorded wherever the signal lands. Outside the tracer
// (in the program's code, or in the real call of an intercepted one) a
// handler's calls are recorded as any call there is: at depth 0, or nested
// in the intercepted call. Inside the tracer (a call's handler, the
// recorder) the tracer may hold its locks and half-built records, so only
// calls whose recording takes no lock (the read, write and seek families)
// are recorded, into a per-thread stash (signal_stash.cpp); the thread
// hands them to its recorder when it records next, each in its place:
// before the call it records, nested in it, or after it.
//
// sigaction and signal install the tracer's trampoline in place of the
// program's function and report the program's function back, so the program
// sees the handlers it set. The tracer's own handlers (crash.cpp) are
// installed as they are.
#include "preload/signals.hpp"

#include <dlfcn.h>
#include <signal.h>

#include <algorithm>
#include <atomic>

#include "preload/log.hpp"
#include "preload/real_table.hpp"
#include "preload/wrapper_support.hpp"

namespace mpior::preload {

namespace {

using Handler = void (*)(int);
using Action = void (*)(int, siginfo_t*, void*);

// The program's handler of each signal, called by the trampoline.
struct ProgramHandler {
  std::atomic<void*> fn{nullptr};
  std::atomic<bool> siginfo{false};
};
ProgramHandler g_handlers[NSIG];

void trampoline(int sig, siginfo_t* info, void* context) {
  ThreadState& t = t_state;
  const uint8_t in_tracer = t.in_tracer, signal_stash = t.signal_stash;
  if (in_tracer) {
    t.in_tracer = kInTracerSignal;
    t.signal_stash = 1;
  }
  void* fn = g_handlers[sig].fn.load(std::memory_order_acquire);
  if (g_handlers[sig].siginfo.load(std::memory_order_relaxed))
    reinterpret_cast<Action>(fn)(sig, info, context);
  else
    reinterpret_cast<Handler>(fn)(sig);
  t.in_tracer = in_tracer;
  t.signal_stash = signal_stash;
}

using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);

std::atomic<SigactionFn> g_real_sigaction{nullptr};

void* handler_of(const struct sigaction& sa) {
  return sa.sa_flags & SA_SIGINFO ? reinterpret_cast<void*>(sa.sa_sigaction) : reinterpret_cast<void*>(sa.sa_handler);
}

bool is_function(void* fn) {
  return fn != reinterpret_cast<void*>(SIG_DFL) && fn != reinterpret_cast<void*>(SIG_IGN) &&
         fn != reinterpret_cast<void*>(SIG_ERR);
}

// The tracer's own handlers go in as they are.
bool tracers_own(void* fn) {
  Dl_info fn_info{}, own{};
  return dladdr(fn, &fn_info) && dladdr(reinterpret_cast<void*>(&trampoline), &own) &&
         fn_info.dli_fbase == own.dli_fbase;
}

// What the kernel holds for sig, as the program set it: the trampoline
// reads as the program's handler, with its own SA_SIGINFO choice.
void as_program_set(struct sigaction& old, void* fn, bool siginfo) {
  if (old.sa_sigaction != trampoline) return;
  if (siginfo) {
    old.sa_sigaction = reinterpret_cast<Action>(fn);
  } else {
    old.sa_flags &= ~SA_SIGINFO;
    old.sa_handler = reinterpret_cast<Handler>(fn);
  }
}

}  // namespace

}  // namespace mpior::preload

using namespace mpior::preload;

extern "C" MPIOR_API int mpior_sigaction(int sig, const struct sigaction* act,
                                         struct sigaction* old) __asm__("sigaction");
extern "C" MPIOR_API sighandler_t mpior_signal(int sig, sighandler_t handler) __asm__("signal");

int mpior_sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  SigactionFn real = resolved_once(g_real_sigaction, "sigaction");
  if (!real) {
    errno = ENOSYS;
    return -1;
  }
  if (sig <= 0 || sig >= NSIG || t_state.in_tracer) return real(sig, act, old);
  ProgramHandler& h = g_handlers[sig];
  void* prev_fn = h.fn.load(std::memory_order_acquire);
  bool prev_siginfo = h.siginfo.load(std::memory_order_relaxed);
  void* fn = act ? handler_of(*act) : nullptr;
  struct sigaction mine;
  const struct sigaction* use = act;
  bool wrap = act && is_function(fn) && !tracers_own(fn);
  if (wrap) {  // the program's handler is known before the kernel may call the trampoline
    h.siginfo.store(act->sa_flags & SA_SIGINFO, std::memory_order_relaxed);
    h.fn.store(fn, std::memory_order_release);
    mine = *act;
    mine.sa_flags |= SA_SIGINFO;
    mine.sa_sigaction = trampoline;
    use = &mine;
  }
  int r = real(sig, use, old);
  int saved = errno;
  if (r == 0 && old) as_program_set(*old, prev_fn, prev_siginfo);
  if (r != 0 && wrap) {
    h.siginfo.store(prev_siginfo, std::memory_order_relaxed);
    h.fn.store(prev_fn, std::memory_order_release);
  }
  errno = saved;
  return r;
}

// glibc's signal(): BSD semantics (SA_RESTART, the signal blocked in its
// handler), through sigaction above.
sighandler_t mpior_signal(int sig, sighandler_t handler) {
  struct sigaction act {
  }, old{};
  act.sa_handler = handler;
  act.sa_flags = SA_RESTART;
  sigemptyset(&act.sa_mask);
  if (sig > 0 && sig < NSIG) sigaddset(&act.sa_mask, sig);
  if (mpior_sigaction(sig, &act, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}
