// The rank's trace written: the write flag that keeps one writer at a
// time (the flush thread, spills, a crash child, exit), the encoding of
// every thread's stream with the process's tables, and the job record.
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "preload/fd_table.hpp"
#include "preload/journal.hpp"
#include "preload/log.hpp"
#include "preload/mpi_handlers.hpp"
#include "preload/mpi_library.hpp"
#include "preload/mpiio_hint_capture.hpp"
#include "preload/recorder.hpp"
#include "preload/session.hpp"
#include "preload/session_state.hpp"
#include "preload/signals.hpp"
#include "preload/spill_writer.hpp"
#include "preload/stolen_time.hpp"
#include "preload/thread_state.hpp"
#include "preload/trace_clock.hpp"
#include "trace/format.hpp"

namespace mpior::preload {

using namespace session_state;

namespace {

trace::JobInfo job_info(trace::JobState state, std::vector<int32_t> written,
                        std::vector<trace::TraceFileRanks> layout = {}) {
  Session& s = S();
  trace::JobInfo j;
  j.job_id = s.job_id;
  j.size = s.size;
  j.state = state;
  j.cmdline = s.info.cmdline;
  j.cwd = s.info.cwd;
  j.host = s.info.host;
  j.start_real_ns = s.info.clock_real_ns;
  if (s.mpi) {
    j.mpi_library = mpi::library_version();
    j.mpi_io = mpi::io_layer();
    if (j.mpi_io == "ompio") j.ompio_fcoll = mpi::forced_fcoll();
    mpi::HintSets hints = mpi::hint_sets();
    j.mpiio_hints = std::move(hints.sets);
    j.mpiio_hint_sets_dropped = hints.dropped;
  }
  j.ranks_written = std::move(written);
  j.trace_files = std::move(layout);
  return j;
}

}  // namespace

bool session_state::write_job(trace::JobState state, std::vector<int32_t> written,
                              std::vector<trace::TraceFileRanks> layout) {
  try {
    trace::write_file_atomic(S().dir + "/" + trace::kJobFileName,
                             trace::encode(job_info(state, std::move(written), std::move(layout))));
    return true;
  } catch (const std::exception& e) {
    log_error("{}", e.what());
    return false;
  }
}

namespace {
// A child trace of the given job (a process the launching program started
// before any trace of its own was written: its pre-exec image).
bool child_trace_of(const std::string& path, uint64_t job) {
  int32_t rank = 0;
  int64_t pid = 0;
  if (!trace::child_from_file_name(path.substr(path.rfind('/') + 1), &rank, &pid)) return false;
  try {
    return trace::read_rank_trace(path).process.job_id == job;
  } catch (const std::exception&) {
    return false;
  }
}
}  // namespace

void session_state::move_launcher_trace(const std::string& dir, uint64_t launcher_job) {
  bool holds = false;  // the launching program's job record is the directory's
  try {
    if (trace::read_job(dir + "/" + trace::kJobFileName).job_id != launcher_job) return;  // prepare_dir decides
    holds = true;
  } catch (const std::exception&) {
  }
  const std::string aside = job_subdir(dir, launcher_job);
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  bool made = false;
  while (const dirent* e = readdir(d)) {
    const std::string from = dir + "/" + e->d_name;
    if (!std::string_view(e->d_name).starts_with("rank-") || (e->d_type != DT_REG && e->d_type != DT_UNKNOWN) ||
        !(holds || child_trace_of(from, launcher_job)))
      continue;
    if (!made && !(made = make_dirs(aside))) break;
    rename(from.c_str(), (aside + "/" + e->d_name).c_str());
  }
  closedir(d);
  // The job record last: the program follows once it is there.
  if (holds && made &&
      rename((dir + "/" + trace::kJobFileName).c_str(), (aside + "/" + trace::kJobFileName).c_str()) == 0)
    log_warn("{} held the trace of the program that started this job's launcher; it moved to {}", dir, aside);
  else if (holds)
    log_warn("cannot move the launching program's trace to {}: {}", aside, std::strerror(errno));
}

void session_state::follow_moved_trace() {
  Session& s = S();
  if (s.mpi) return;
  const std::string aside = job_subdir(s.dir, s.job_id);
  struct stat st;
  if (stat((aside + "/" + trace::kJobFileName).c_str(), &st) != 0) return;
  s.dir = aside;
  journal::set_dir(aside);
}

bool session_state::newer_job_in_dir() {
  follow_moved_trace();
  try {
    trace::JobInfo j = trace::read_job(S().dir + "/" + trace::kJobFileName);
    return j.start_real_ns > S().info.clock_real_ns;
  } catch (const std::exception&) {
    return false;  // none, or unreadable: replaced
  }
}

namespace session {

namespace {
std::atomic_flag g_writing = ATOMIC_FLAG_INIT;  // a write_rank is under way (or a crash holds writes)

void pause_ms(long ms) {
  timespec ts{0, ms * 1000000};
  nanosleep(&ts, nullptr);
}
}  // namespace

void hold_writes() noexcept {
  for (int i = 0; i < 3000 && g_writing.test_and_set(std::memory_order_acquire); ++i) pause_ms(1);
}
void release_writes() noexcept { g_writing.clear(std::memory_order_release); }
void lock_writes() noexcept {
  while (g_writing.test_and_set(std::memory_order_acquire)) pause_ms(1);
}

bool spill_target(std::string* path, int32_t* rank) {
  Session& s = S();
  if (!s.traced || !s.writable || s.child || (s.under_mpi && !s.mpi) || s.finalized) return false;
  if (!s.mpi && !s.dir_ready) {  // a standalone program's directory is made at its first write
    if (!prepare_dir(s.dir, s.job_id).empty()) return false;
    s.dir_ready = true;
  }
  *path = s.dir + "/" + trace::spill_file_name(s.rank);
  *rank = s.rank;
  return true;
}

bool write_rank(bool finished) {
  lock_writes();
  bool ok = write_rank_now(finished);
  release_writes();
  return ok;
}

namespace {
// A standalone program's directory, made at its first write.
bool standalone_dir_ready() {
  Session& s = S();
  if (!s.dir_ready && !prepare_dir(s.dir, s.job_id).empty()) return false;
  s.dir_ready = true;
  return true;
}

// A standalone program's trace so far, its job marked running.
bool write_standalone_running_now() {
  return standalone_dir_ready() && write_rank_now(false) && write_job(trace::JobState::running, {0});
}

// The file this process's trace goes to in its directory.
std::string trace_file_name() {
  Session& s = S();
  return s.child ? trace::child_file_name(s.rank, s.info.pid, s.serial) : trace::rank_file_name(s.rank);
}
}  // namespace

bool start_journal() {
  Session& s = S();
  if (!journal::enabled() || s.mpi || (s.under_mpi && !s.child) || !s.writable) return false;
  lock_writes();
  follow_moved_trace();
  if (!s.child && newer_job_in_dir()) return release_writes(), false;
  // The journal first: the records after the trace file's snapshot go to it.
  if (s.child ? make_dirs(s.dir) : standalone_dir_ready()) journal::start(s.dir, trace_file_name(), s.rank);
  const bool ok =
      journal::g_started.load() && write_rank_now(false) && (s.child || write_job(trace::JobState::running, {0}));
  release_writes();
  return ok;
}

bool write_periodic() {
  Session& s = S();
  if (s.mpi || s.child) return write_rank(false);
  lock_writes();
  bool ok = !newer_job_in_dir() && write_standalone_running_now();
  release_writes();
  return ok;
}

namespace {
// The communicator table as written last, extended at each write (under the
// write flag). A crash child starts a new one: the copy it got may have been
// caught mid-append by a flush that did not let go of the flag.
trace::EncodedComms* g_comms = nullptr;

// The rank's trace encoded; throws when it cannot be made.
std::vector<uint8_t> encode_now(bool finished) {
  Session& s = S();
  trace::RankTrace t;
  t.process = s.info;
  t.process.job_id = s.job_id;
  t.process.rank = s.rank;
  t.process.size = s.size;
  t.process.mpi = s.mpi && !s.child;
  t.process.finished = finished;
  t.process.pruning = s.pruning;
  t.pruned = pruned_tallies();
  t.excluded = excluded_tallies();
  t.unrecorded = signal_unrecorded_tallies();
  t.spill_segments = spill::segments();  // under the write flag: no segment is being appended
  t.process.end_ns = clock::elapsed_ns();
  t.process.cpu_wait_ns = stolen::total_ns();
  t.files = files().entries();
  if (!g_comms) g_comms = new trace::EncodedComms();
  if (s.mpi) mpi::state().encode_comms(g_comms);
  uint64_t events = 0;
  size_t memory = 0;
  for (ThreadRecorder* r : all_recorders()) {
    uint64_t in_snapshot = 0;
    t.streams.push_back(r->snapshot(s.rank, &in_snapshot));
    uint64_t covered = journal::cover(r->index(), in_snapshot);
    t.journaled.push_back({r->index(), covered});
    events += covered;
    memory += r->memory_bytes();
  }
  const trace::Effort effort = finished ? trace::Effort::small : trace::Effort::fast;
  std::vector<uint8_t> bytes = s.mpi ? trace::encode(t, *g_comms, effort) : trace::encode(t, effort);
  s.events_written = events;
  log_info("rank {}: {} events in {} streams, tracer memory {} bytes, trace {} bytes", s.rank, events, t.streams.size(),
           memory, bytes.size());
  return bytes;
}
}  // namespace

std::vector<uint8_t> encode_rank(bool finished) {
  while (g_writing.test_and_set(std::memory_order_acquire)) pause_ms(1);
  TracerGuard guard;
  std::vector<uint8_t> out;
  try {
    if (S().writable) out = encode_now(finished);
  } catch (const std::exception& e) {
    log_error("rank {}: trace not made: {}", S().rank, e.what());
  }
  release_writes();
  return out;
}

bool write_rank_now(bool finished) {
  Session& s = S();
  if (!s.writable) return false;
  TracerGuard guard;
  try {
    follow_moved_trace();
    uint64_t before = s.events_written;
    std::vector<uint8_t> bytes = encode_now(finished);
    if (s.child && !make_dirs(s.dir)) throw std::runtime_error(s.dir + ": " + std::strerror(errno));
    try {
      trace::write_file_atomic(s.dir + "/" + trace_file_name(), bytes);
    } catch (...) {
      s.events_written = before;
      throw;
    }
    journal::flushed();
    return true;
  } catch (const std::exception& e) {
    log_error("rank {}: trace not written: {}", s.rank, e.what());
    return false;
  }
}

bool write_crash_copy() {
  Session& s = S();
  g_comms = nullptr;  // the parent's stays where it is
  if (!s.traced || (s.under_mpi && !s.mpi && !s.child)) return false;
  if (s.mpi || s.child) return write_rank_now(false);
  return write_standalone_running_now();
}

uint64_t events_recorded() {
  uint64_t n = 0;
  for (ThreadRecorder* r : all_recorders()) n += r->events();
  return n;
}

bool write_standalone() {
  Session& s = S();
  std::string err = s.dir_ready ? std::string() : prepare_dir(s.dir, s.job_id);
  if (!err.empty()) {
    log_error("cannot write traces to {}: {}", s.dir, err);
    return false;
  }
  s.dir_ready = true;
  return write_rank(true) && write_job(trace::JobState::complete, {0});
}
}  // namespace session

}  // namespace mpior::preload
