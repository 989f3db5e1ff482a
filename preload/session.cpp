// The traced process's life: load, MPI_Init, MPI_Finalize, exit, fork.
// Decides whether this process is traced at all, agrees on one job id across
// ranks, owns the trace directory, and writes the rank's trace.
#include "preload/session.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "preload/aggregate.hpp"
#include "preload/call_residual.hpp"
#include "preload/config.hpp"
#include "preload/cpu_placement.hpp"
#include "preload/crash.hpp"
#include "preload/fd_table.hpp"
#include "preload/high_fd.hpp"
#include "preload/journal.hpp"
#include "preload/lineage.hpp"
#include "preload/log.hpp"
#include "preload/mpi_handlers.hpp"
#include "preload/piggyback/pruner.hpp"
#include "preload/proc_text.hpp"
#include "preload/real_table.hpp"
#include "preload/recorder.hpp"
#include "preload/session_state.hpp"
#include "preload/signals.hpp"
#include "preload/spill_writer.hpp"
#include "preload/stolen_time.hpp"
#include "preload/trace_clock.hpp"
#include "preload/ucm_bridge.hpp"
#include "preload/unwinder.hpp"
#include "trace/format.hpp"

namespace mpior::preload {

using namespace session_state;

namespace {

constinit config::Option<std::string_view> opt_dir{
    "MPIOR_TRACE_DIR", "traces",
    "directory the traces go to (relative: to the working directory at start); "
    "a directory already holding a trace gets this job's in a subdirectory job-<id>, never overwritten"};
// Always excluded: the MPI library's and hwloc's own reads of the system
// (topology discovery inside MPI_Init and MPI_Comm_split_type reads dozens
// of /proc and /sys files, in loops over the node's processes: a plan would
// change shape with the rank count for reasons the program does not have).
constexpr const char* kDefaultExclude =
    "/proc,/sys,/dev,!/dev/shm,/dev/shm/mpich_*,/dev/shm/ucx_*,/dev/shm/vader_segment*,/dev/shm/sm_segment*,"
    "/tmp/ompi.*";
constinit config::Option<std::string_view> opt_exclude{
    "MPIOR_EXCLUDE", kDefaultExclude,
    "comma-separated path prefixes whose files are not traced, added to the default (the trace directory never "
    "is); the longest prefix that holds a path decides; !PREFIX keeps what a shorter one excludes (!/proc traces "
    "/proc); PREFIX* holds any path starting so (MPI libraries' shared-memory segments). Excluded calls are "
    "counted per kind"};
constinit config::Option<std::string_view> opt_exclude_exe{
    "MPIOR_EXCLUDE_EXE", "mpiexec*,mpirun*,hydra_*,orterun,prterun,prted,orted,srun",
    "comma-separated executable names (shell patterns) never traced: MPI launchers and their proxies"};
constinit config::Option<std::string_view> opt_timing{
    "MPIOR_TIMING", "stats", "per-position timing kept: statistics and histograms, or every value", "stats|lossless"};
constinit config::Option<std::string_view> opt_clock{
    "MPIOR_CLOCK", "tsc",
    "timestamp source: the invariant TSC (falls back when the CPU has none) "
    "or CLOCK_MONOTONIC",
    "tsc|monotonic"};
constinit config::Option<bool> opt_disable{"MPIOR_DISABLE", false, "1: load but trace nothing"};
constinit config::Option<bool> opt_prune{
    "MPIOR_PRUNE", true,
    "keep only the MPI synchronisation that can change when I/O is issued (thesis 2.1); 0 logs every MPI call. "
    "Off when the application uses MPI_THREAD_MULTIPLE"};
constinit config::Option<bool> opt_children{
    "MPIOR_CHILDREN", true,
    "trace the processes a traced program starts (fork, exec, system(), posix_spawn): each writes its own trace, "
    "which mpior-post folds into its rank as extra threads"};
MPIOR_REGISTER_OPTION(opt_dir);
MPIOR_REGISTER_OPTION(opt_children);
MPIOR_REGISTER_OPTION(opt_exclude);
MPIOR_REGISTER_OPTION(opt_exclude_exe);
MPIOR_REGISTER_OPTION(opt_timing);
MPIOR_REGISTER_OPTION(opt_clock);
MPIOR_REGISTER_OPTION(opt_disable);
MPIOR_REGISTER_OPTION(opt_prune);

}  // namespace

namespace session_state {

Session& S() {
  static auto* s = new Session();
  return *s;
}

bool prune_option() { return opt_prune.get(); }
bool children_option() { return opt_children.get(); }
std::string trace_dir_option() { return std::string(opt_dir.get()); }

}  // namespace session_state

namespace {

std::vector<std::string> split_commas(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t c = s.find(',', start);
    std::string_view part = s.substr(start, c == std::string_view::npos ? s.npos : c - start);
    if (!part.empty()) out.emplace_back(part);
    if (c == std::string_view::npos) break;
    start = c + 1;
  }
  return out;
}

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool name_matches(const std::string& name, std::string_view patterns) {
  for (const std::string& p : split_commas(patterns))
    if (fnmatch(p.c_str(), name.c_str(), 0) == 0) return true;
  return false;
}

std::string exe_path() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, size_t(n)) : std::string();
}

bool launched_by_mpi() {
  for (const char* v : {"PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_RANK"})
    if (std::getenv(v)) return true;
  return false;
}

void fill_process_info(trace::ProcessInfo& info) {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  char cwd[PATH_MAX] = {0};
  if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
  std::string cmd = read_text("/proc/self/cmdline");
  for (char& ch : cmd)
    if (ch == '\0') ch = ' ';
  while (!cmd.empty() && cmd.back() == ' ') cmd.pop_back();
  info.pid = getpid();
  info.host = host;
  info.cwd = cwd;
  info.exe = exe_path();
  info.cmdline = cmd;
  info.clock_mono_ns = clock::start_monotonic_ns();
  info.clock_real_ns = clock::start_realtime_ns();
  info.placement = current_placement();
}

bool holds_trace(const std::string& dir) {
  struct stat st;
  return stat((dir + "/" + trace::kJobFileName).c_str(), &st) == 0;
}

}  // namespace

bool session_state::make_dirs(const std::string& dir) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    partial = dir.substr(0, pos);
    if (!partial.empty() && mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  struct stat st;
  return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string session_state::job_subdir(const std::string& dir, uint64_t job_id) {
  char buf[32];
  snprintf(buf, sizeof buf, "/job-%016llx", static_cast<unsigned long long>(job_id));
  return dir + buf;
}

// Makes the directory ready for this job: exists and writable. A directory
// that already holds a trace is never overwritten: the job writes to a
// subdirectory named by its id and says so. Returns an error text, empty if
// ready; dir is where the job writes.
std::string session_state::prepare_dir(std::string& dir, uint64_t job_id) {
  if (!make_dirs(dir)) return std::strerror(errno);
  if (holds_trace(dir)) {
    std::string beside = job_subdir(dir, job_id);
    if (!make_dirs(beside)) return beside + ": " + std::strerror(errno);
    log_warn("{} already holds a trace; this job's trace goes to {}", dir, beside);
    dir = beside;
  }
  std::string probe = dir + "/.mpior-probe." + std::to_string(getpid());
  int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return std::strerror(errno);
  close(fd);
  unlink(probe.c_str());
  return {};
}

uint64_t session_state::new_job_id() {
  uint64_t id = 0;
  if (getrandom(&id, sizeof id, 0) != sizeof id) id = uint64_t(clock::realtime_ns()) ^ (uint64_t(getpid()) << 40);
  return id ? id : 1;
}

namespace {

void on_exit_handler() { session::on_exit(); }
// A forked child records for itself from here, as a child of its rank.
// The crash handler's own copies use _Fork and never come here.
void on_fork_child() {
  Session& s = S();
  if (!s.traced || !s.writable || !opt_children.get() || (s.under_mpi && !s.mpi && !s.child)) {
    g_recording.store(false);
    s.traced = false;
    crash::after_fork_child(false);
    return;
  }
  reset_after_fork();
  stolen::reset_after_fork();
  // The parent's flush thread may hold the write flag; it is not in this process.
  session::release_writes();
  crash::after_fork_child(true);
  s.child = true;
  s.mpi = false;
  s.pruning = false;
  s.written_at_exit = false;
  s.events_written = 0;
  s.info.pid = getpid();
  s.serial = new_job_id();
  s.dir_lock = -1;
}

// The identity a standalone program passes to what it starts: its job and
// the directory it will write to (beside an earlier trace, if one is there).
void become_root(Session& s) {
  s.job_id = new_job_id();
  if (holds_trace(s.dir)) s.dir = job_subdir(s.dir, s.job_id);
  if (opt_children.get()) lineage::announce({s.dir, s.job_id, 0, 1, s.info.clock_mono_ns, s.info.clock_real_ns});
}

// The traced process this one is a child of, if any. Started by a launcher
// that a traced standalone program started, a process is a rank of a job of
// its own (or a wrapper between launcher and rank), not that program's child.
std::optional<lineage::Parent> parent_of(Session& s) {
  std::optional<lineage::Parent> parent = lineage::inherited();
  if (!parent || !s.under_mpi || parent->mpi_rank) return parent;
  s.launcher_job = parent->job_id;
  return std::nullopt;
}

}  // namespace

namespace session {

void on_load() {
  TracerGuard guard;
  real::resolve_all();
  config::load();
  spill::cap_bytes();  // a bad MPIOR_MEMORY is reported now, not at the first spill check
  Session& s = S();
  std::string exe = exe_path();
  if (opt_disable.get() || name_matches(basename_of(exe), opt_exclude_exe.get())) return;
  unwinder::load();
  s.under_mpi = launched_by_mpi();
  std::optional<lineage::Parent> parent = parent_of(s);
  if (parent)
    clock::start_at(parent->mono_ns, parent->real_ns, opt_clock.get() == "tsc");
  else
    clock::start(opt_clock.get() == "tsc");
  s.dir = absolute_path(AT_FDCWD, std::string(opt_dir.get()).c_str());
  std::vector<std::string> excluded = split_commas(kDefaultExclude);
  for (std::string& e : split_commas(opt_exclude.get())) excluded.push_back(std::move(e));
  excluded.push_back(s.dir);
  if (parent) excluded.push_back(parent->dir);
  set_excluded(std::move(excluded));
  register_std_streams();
  set_builder_options({opt_timing.get() == "lossless"});
  fill_process_info(s.info);
  if (parent) {
    s.child = true;
    s.dir = parent->dir;
    s.job_id = parent->job_id;
    s.rank = parent->rank;
    s.size = parent->size;
    s.serial = new_job_id();
  } else if (!s.under_mpi) {
    // A standalone program holds the trace directory for its lifetime: a
    // traced program it starts (which inherits LD_PRELOAD) finds it taken
    // and stays untraced instead of overwriting the parent's trace.
    if (!make_dirs(s.dir)) {
      log_error("cannot write traces to {}: {}; the program runs untraced", s.dir, std::strerror(errno));
      return;
    }
    s.dir_lock = hold_high_fd(open(s.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (s.dir_lock < 0 || flock(s.dir_lock, LOCK_EX | LOCK_NB) != 0) {
      log_debug("{} is in use by another traced process; this one is not traced", s.dir);
      return;
    }
    become_root(s);
  }
  s.traced = true;
  s.writable = true;
  if (!s.under_mpi || s.child) crash::start_lazily(journal::enabled());
  atexit(on_exit_handler);
  pthread_atfork(nullptr, nullptr, on_fork_child);
  g_recording.store(true);
  ucm_bridge_attach();  // MPICH's UCX is loaded with the program
  measure_call_residual();
}

}  // namespace session

namespace {

// A vfork child: no fork handler ran, so it still has the parent's pid on
// record, and it shares the parent's memory. It must not stop the parent's
// thread nor write the parent's trace as finished.
bool in_vfork_child(const Session& s) { return s.traced && getpid() != s.info.pid; }

}  // namespace

bool session_before_exec() noexcept {
  if (t_state.in_tracer) return true;
  Session& s = S();
  if (in_vfork_child(s)) return false;
  if (!s.traced || s.mpi || !g_recording.load()) return true;
  TracerGuard guard;
  crash::stop_for_exec();
  if (s.child)
    session::write_rank(true);
  else if (!s.under_mpi)
    session::write_standalone();
  return true;
}

// Not from inside the tracer: the crash handler's copy leaves by _exit.
bool session_before_exit() noexcept {
  if (t_state.in_tracer) return true;
  if (in_vfork_child(S())) return false;  // a vfork child whose exec failed
  session::on_exit();
  return true;
}

namespace session {

void on_exit() {
  Session& s = S();
  if (!s.traced || s.written_at_exit) return;
  s.written_at_exit = true;
  TracerGuard guard;
  crash::stop();
  if (g_recording.load()) {
    drain_signal_records(0);  // a signal handler's calls made after this thread's last call
    report_signal_losses();
    map_record_live();     // shared writable mappings write back at exit
    aio_record_orphans();  // AIO requests nobody asked about finished
  }
  if (s.child) {
    if (write_rank(true)) journal::finish();  // else mpior-post recovers what the journal holds
  } else if (s.under_mpi && !s.mpi) {
    // Under an MPI launcher but never a rank: a wrapper script or a program
    // a rank started. Only ranks write.
    log_debug("process {} did not call MPI_Init: its trace is not kept", s.info.pid);
  } else if (!s.mpi && newer_job_in_dir()) {
    // A job started after this process (an MPI run it launched: `time mpirun
    // ...` with the preload set) owns the directory now; replacing it with
    // this process's trace would lose that job's.
    log_info("{} holds a job started after this process; its trace is left in place", s.dir);
  } else if (!s.mpi) {
    if (write_standalone()) journal::finish();  // else mpior-post recovers what the journal holds
  } else if (!s.finalized || events_recorded() != s.events_written) {
    // I/O after MPI_Finalize, or an exit without it (the job stays
    // "running": mpior-post reports it as not finished).
    write_rank(s.finalized);
  }
  g_recording.store(false);
}

}  // namespace session

}  // namespace mpior::preload
