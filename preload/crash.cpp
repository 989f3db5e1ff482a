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
// it at MPI_Init, beside its crash journal (journal.hpp: a SIGKILL loses
// nothing from there).
//
// A standalone program, and a process a traced one started (a forked child,
// an exec'd program), starts its crash journal at its first recorded call
// instead (not at load: a process that records nothing, or forks only to
// exec, gets no journal and no thread; a forked child anew: the parent's
// journal and thread are not its own). Its own thread rewrites the trace,
// at the first call after each interval: a thread of the tracer's would
// switch on glibc's multi-thread locking (stdio locks, syscall
// cancellation) in a program that never needed it, a cost on every call.
// Once the program starts a thread of its own, that cost is paid anyway,
// and the flush thread takes over.
#include "preload/crash.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/single_threaded.h>
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
#include "preload/trace_clock.hpp"

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

// What due() does (g_due says when).
enum class Mode : uint8_t {
  idle,           // nothing: the flush thread runs, or none is wanted
  start_thread,   // the first recorded call starts the flush thread
  start_journal,  // the first recorded call starts the crash journal, then as `here`
  here,           // the calling thread flushes once the interval has passed
};
Mode g_mode = Mode::idle;  // under g_in_due (or before any call)
std::atomic_flag g_in_due = ATOMIC_FLAG_INIT;
pid_t g_pid = 0;              // a vfork child (another pid) shares this memory: it flushes nothing
uint64_t g_written_here = 0;  // events in the last write from the calling thread

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
  recorders_keep_chunks_private();
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
  g_pid = getpid();
  start_flusher(journal::enabled());
}

namespace {

int64_t ticks_from_now(long ms) noexcept {
  const clock::Scale scale = clock::scale();
  const double ns = double(ms) * 1e6;
  return clock::now() + int64_t(scale.tsc ? ns / scale.ns_per_tick : ns);
}

void set_mode(Mode m) noexcept {
  g_mode = m;
  journal::set_flushes_here(m == Mode::here);
  g_due.store(m == Mode::idle ? kDueNever : kDueNow, std::memory_order_relaxed);
}

// A flush on the calling thread (Mode::here), then the next one's time.
void flush_here() noexcept {
  journal::take_flush_wanted();
  const uint64_t now = session::events_recorded();
  if (now != g_written_here) {
    spill::before_flush();
    if (session::write_periodic()) g_written_here = now;
  }
  const long interval = long(opt_flush.get());
  g_due.store(interval > 0 ? ticks_from_now(interval) : kDueNever, std::memory_order_relaxed);
}

void run_due() noexcept {
  if (g_mode == Mode::start_journal) {
    set_mode(Mode::here);
    if (!session::start_journal()) return set_mode(Mode::start_thread), run_due();  // the flush thread as before
    g_written_here = session::events_recorded();
  }
  if (g_mode == Mode::start_thread) {
    set_mode(Mode::idle);
    return start_flusher();
  }
  if (g_mode != Mode::here) return set_mode(Mode::idle);
  if (!__libc_single_threaded) {  // the program has threads: libc locks whatever the tracer does
    set_mode(Mode::idle);
    return start_flusher(true);  // the journal needs its flushes even without an interval
  }
  flush_here();
}

}  // namespace

void start_lazily(bool journaled) {
  if (opt_signals.get()) install();
  g_pid = getpid();
  set_mode(journaled ? Mode::start_journal : opt_flush.get() > 0 ? Mode::start_thread : Mode::idle);
}

void due() noexcept {
  if (g_in_due.test_and_set(std::memory_order_acquire)) return;  // another thread is at it
  TracerGuard guard;
  const int saved = errno;
  if (getpid() == g_pid) run_due();
  errno = saved;
  g_in_due.clear(std::memory_order_release);
}

void want_flush() noexcept {
  if (!spill::request()) g_due.store(kDueNow, std::memory_order_relaxed);
}

void after_fork_child(bool traced) {
  journal::reset_after_fork();
  g_flusher_running = false;  // the parent's thread is not in the child
  g_dumped.store(false);
  g_in_due.clear();
  g_pid = getpid();
  g_written_here = 0;
  set_mode(!traced               ? Mode::idle
           : journal::enabled()  ? Mode::start_journal
           : opt_flush.get() > 0 ? Mode::start_thread
                                 : Mode::idle);
}

void stop_for_exec() {
  // If the exec fails, flushes resume at the next call: the calling
  // thread's (its journal goes on), or a new flush thread.
  const Mode was = g_mode;
  stop();
  g_dumped.store(false);
  if (was == Mode::here || was == Mode::start_journal)
    set_mode(was);
  else if (opt_flush.get() > 0)
    set_mode(Mode::start_thread);
}

void stop() {
  g_dumped.store(true);  // the final write follows: a later crash leaves it in place
  set_mode(Mode::idle);
  if (!g_flusher_running) return;
  g_stop.store(true);
  pthread_join(g_flusher, nullptr);
  g_flusher_running = false;
}

}  // namespace mpior::preload::crash
