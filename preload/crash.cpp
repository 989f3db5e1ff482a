// How a rank's trace survives the ways real jobs end.
//
// Caught signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT):
// the handler uses async-signal-safe calls only. It _Fork()s a child, a frozen
// copy of the process, and waits for it (bounded); the child writes the trace
// from the copy and _exits, so nothing the interrupted code holds is touched
// in the dying process itself. A child that finds a recorder or registry
// locked by a thread caught mid-update exits "busy" and the handler forks
// again a little later. Then the handler restores the previous action and
// raises the signal again: the program's own exit status, core dump or
// handler are unchanged. A SIGTERM/SIGINT that arrives while the thread holds
// its own recorder's lock is raised again once the record is done.
//
// SIGKILL and node loss: a background thread rewrites the trace every
// MPIOR_FLUSH_INTERVAL milliseconds when there are new events. A rank starts
// it at MPI_Init; a standalone program, a forked child and an exec'd one at
// their first recorded call (not at load: a process that records nothing,
// or forks only to exec, gets no thread), and a forked child anew: the
// parent's thread is not copied into it.
#include "preload/crash.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>

#include "preload/config.hpp"
#include "preload/journal.hpp"
#include "preload/log.hpp"
#include "preload/recorder.hpp"
#include "preload/session.hpp"
#include "preload/spill_writer.hpp"
#include "preload/thread_state.hpp"

namespace mpior::preload::crash {
namespace {

constinit config::Option<int64_t> opt_flush{
    "MPIOR_FLUSH_INTERVAL", 1000,
    "milliseconds between rewrites of the rank's trace while it runs (what a SIGKILL can lose); 0: never"};
constinit config::Option<bool> opt_signals{
    "MPIOR_CRASH_SIGNALS", true,
    "write the trace when the process dies by SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM or SIGINT"};
MPIOR_REGISTER_OPTION(opt_flush);
MPIOR_REGISTER_OPTION(opt_signals);

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT};
constexpr int kBusy = 75;             // the child's exit status: a lock was held, try again
constexpr long kChildLimitMs = 5000;  // a child that takes longer is killed
constexpr int kAttempts = 100;

struct sigaction g_old[NSIG];
std::atomic<bool> g_dumped{false};
std::atomic<bool> g_stop{false};
pthread_t g_flusher;
bool g_flusher_running = false;
constexpr long kNever = std::numeric_limits<long>::max();

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// Waits for the child, at most kChildLimitMs; its exit status, or -1.
int wait_child(pid_t pid) {
  int status = 0;
  for (long waited = 0; waitpid(pid, &status, WNOHANG) == 0; ++waited) {
    if (waited >= kChildLimitMs) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    sleep_ms(1);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The child: a single-threaded copy of the process at the signal.
[[noreturn]] void child_write() {
  t_state.in_tracer = 1;
  if (!recorders_idle()) _exit(kBusy);
  _exit(session::write_crash_copy() ? 0 : 1);
}

void dump() {
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    pid_t pid = _Fork();
    if (pid == 0) child_write();
    if (pid < 0) return;
    if (wait_child(pid) != kBusy) return;
    sleep_ms(2);
  }
}

bool is_async(int sig) { return sig == SIGTERM || sig == SIGINT; }

void on_signal(int sig, siginfo_t*, void*) {
  int saved = errno;
  ThreadRecorder* mine = t_state.recorder;
  if (is_async(sig) && mine && mine->locked()) {
    g_pending_signal.store(sig);  // raised again at the end of the record (call.hpp)
    errno = saved;
    return;
  }
  if (!g_dumped.exchange(true) && g_recording.load()) {
    session::hold_writes();
    dump();
    session::release_writes();
  }
  sigaction(sig, &g_old[sig], nullptr);
  raise(sig);  // blocked until the handler returns, then delivered with the program's own action
  errno = saved;
}

void install() {
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : kSignals) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;  // ignored stays ignored
    // Installed twice (at load and again at MPI_Init), our own handler would
    // become the one to chain to, and a fatal signal would loop in it forever.
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == on_signal) continue;
    g_old[sig] = old;
    sigaction(sig, &sa, nullptr);
  }
}

long now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return long(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Also spills threads whose memory reached the cap (spill_writer.hpp), woken at once.
void* flush_loop(void*) {
  TracerGuard guard;
  uint64_t written = session::events_recorded();
  // Without a period (MPIOR_FLUSH_INTERVAL=0) an MPI rank's thread still
  // rewrites the rank file when a journal ring is half full, or the ring
  // would overwrite what a SIGKILL then loses; calls fold where they are made.
  long interval = long(opt_flush.get());
  bool periodic = interval > 0;
  long next = periodic ? now_ms() + interval : kNever;
  set_fold_behind(periodic);
  while (!g_stop.load()) {
    spill::wait(std::clamp(next - now_ms(), 0L, 50L));
    fold_behind_service();
    spill::service();
    if (g_stop.load() || (now_ms() < next && !journal::take_flush_wanted())) continue;
    next = periodic ? now_ms() + interval : kNever;
    uint64_t now = session::events_recorded();
    if (now == written) continue;
    spill::before_flush();
    if (session::write_periodic()) written = now;
  }
  set_fold_behind(false);  // recording threads fold what they park from here on
  spill::set_flusher(false);
  spill::service();
  return nullptr;
}

}  // namespace

void raise_pending() noexcept {
  int sig = g_pending_signal.exchange(0);
  if (sig) raise(sig);
}

void start_flusher(bool for_journal = false) {
  if ((opt_flush.get() <= 0 && !for_journal) || g_flusher_running) return;
  g_stop.store(false);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);  // signals go to the application's threads
  spill::set_flusher(true);
  g_flusher_running = pthread_create(&g_flusher, nullptr, flush_loop, nullptr) == 0;
  if (!g_flusher_running) spill::set_flusher(false);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (!g_flusher_running) log_warn("no periodic trace flush: cannot start its thread");
}

void start() {
  if (opt_signals.get()) install();
  start_flusher(journal::enabled());
}

void start_lazily() {
  if (opt_signals.get()) install();
  g_flusher_wanted.store(opt_flush.get() > 0, std::memory_order_relaxed);
}

void start_wanted_flusher() noexcept {
  if (!g_flusher_wanted.exchange(false)) return;
  TracerGuard guard;
  int saved = errno;
  start_flusher();
  errno = saved;
}

void after_fork_child(bool traced) {
  journal::reset_after_fork();
  g_flusher_running = false;  // the parent's thread is not in the child
  g_dumped.store(false);
  g_flusher_wanted.store(traced && opt_flush.get() > 0, std::memory_order_relaxed);
}

void stop_for_exec() {
  stop();
  g_dumped.store(false);
  g_flusher_wanted.store(opt_flush.get() > 0, std::memory_order_relaxed);  // if the exec fails
}

void stop() {
  g_dumped.store(true);  // the final write follows: a later crash leaves it in place
  if (!g_flusher_running) return;
  g_stop.store(true);
  pthread_join(g_flusher, nullptr);
  g_flusher_running = false;
}

}  // namespace mpior::preload::crash
