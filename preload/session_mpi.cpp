// The session's MPI side: MPI_Init (and MPI-4 Sessions) agree on the job
// and start recording and pruning; MPI_Abort and MPI_Finalize write the
// job's traces (aggregate.cpp) and its job record.
#include <fcntl.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "preload/aggregate.hpp"
#include "preload/clock_align.hpp"
#include "preload/config.hpp"
#include "preload/crash.hpp"
#include "preload/fd_table.hpp"
#include "preload/journal.hpp"
#include "preload/lineage.hpp"
#include "preload/log.hpp"
#include "preload/mpi_handlers.hpp"
#include "preload/piggyback/pruner.hpp"
#include "preload/prune_gap.hpp"
#include "preload/session.hpp"
#include "preload/session_state.hpp"
#include "preload/stolen_time.hpp"
#include "preload/thread_state.hpp"
#include "preload/ucm_bridge.hpp"

namespace mpior::preload {

using namespace session_state;

namespace mpi {

namespace {

constinit config::Option<int64_t> opt_streak{
    "MPIOR_PRUNE_STREAK", 16,
    "with pruning, after this many blocking collectives in a row on one communicator that every member kept (I/O "
    "before each), keep the next ones without exchanging a decision (as many, then twice as many while the next "
    "exchange keeps too, up to 1024): the exchange is a second collective beside each; 0: exchange every one"};
MPIOR_REGISTER_OPTION(opt_streak);

// Every rank prunes or none does: auxiliary messages need both sides. Not
// with MPI_THREAD_MULTIPLE, where calls on one channel may race between
// threads and no message order is known. The ranks skip exchanges on the
// same streak (the shortest asked for: a rank that skipped alone would hang).
void start_pruning(Session& s) {
  int provided = MPI_THREAD_SINGLE;
  pmpi::Query_thread(&provided);
  int64_t streak = std::clamp<int64_t>(opt_streak.get(), 0, INT32_MAX);
  int mine[2] = {prune_option() && provided < MPI_THREAD_MULTIPLE, int(streak)}, all[2] = {0, 0};
  pmpi::Allreduce(mine, all, 2, MPI_INT, MPI_MIN, s.private_comm);
  s.pruning = all[0];
  piggyback::pruner().start(all[0], s.rank, s.size, uint32_t(all[1]));
  if (all[0]) start_gap_rule();
}

// The ranks sharing this rank's node: with more than its CPUs the ranks take
// the CPU from each other, and that wait is the program's own.
int ranks_on_node(MPI_Comm comm, int rank) {
  MPI_Comm node = MPI_COMM_NULL;
  int n = 1;
  if (pmpi::Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) != MPI_SUCCESS) return n;
  pmpi::Comm_size(node, &n);
  pmpi::Comm_free(&node);
  return n;
}

}  // namespace

namespace {

// After the rank is known and the private communicator made: the job id and
// directory are agreed, recording and pruning start.
void start_job(Session& s, bool prune) {
  state().init(s.rank, s.size);
  s.mpi = true;
  if (s.child) {
    // A rank whose launcher a traced process started (`bash -c "mpirun
    // ..."`): a rank of its own job, not a child of that process.
    s.child = false;
    s.dir = absolute_path(AT_FDCWD, trace_dir_option().c_str());
  }
  uint64_t agreed[3] = {0, 0, 0};  // job id, directory ready, in a subdirectory named by the job
  if (s.rank == 0) {
    agreed[0] = new_job_id();
    s.job_id = agreed[0];
    std::string top = s.dir;
    if (s.writable && s.launcher_job) move_launcher_trace(s.dir, s.launcher_job);
    std::string err = s.writable ? prepare_dir(s.dir, s.job_id) : "tracing disabled";
    agreed[2] = s.dir != top;
    if (err.empty() && write_job(trace::JobState::running, {}))
      agreed[1] = 1;
    else if (s.writable)
      log_error("cannot write traces to {}: {}; the application runs untraced", s.dir, err);
  }
  pmpi::Bcast(agreed, 3, MPI_UINT64_T, 0, s.private_comm);
  s.job_id = agreed[0];
  if (s.rank != 0 && agreed[2]) s.dir = job_subdir(s.dir, s.job_id);
  if (!agreed[1]) {
    s.writable = false;
    g_recording.store(false);
    return;
  }
  // Every rank's clock against rank 0's (clock_align.hpp), stored in the trace.
  s.info.clock_mono_ns += clock_align::test_skew_ns(s.rank);
  s.info.clock_offset_ns = clock_align::offset_to_rank0(s.private_comm, s.rank, s.size);
  if (prune)
    start_pruning(s);
  else
    piggyback::pruner().start(false, s.rank, s.size);
  stolen::start(ranks_on_node(s.private_comm, s.rank));
  crash::start();
  if (journal::enabled()) {  // from here a SIGKILL loses nothing: the rank file, then the journal
    journal::start(s.dir, trace::rank_file_name(s.rank), s.rank);
    session::write_rank(false);
  }
  if (children_option())
    lineage::announce({s.dir, s.job_id, s.rank, s.size, s.info.clock_mono_ns, s.info.clock_real_ns, true});
}

}  // namespace

void session_mpi_abort() noexcept {
  Session& s = S();
  TracerGuard guard;
  if (!s.mpi || s.finalized) return;
  crash::stop();
  session::write_rank(false);
}

void session_mpi_init(int) noexcept {
  Session& s = S();
  TracerGuard guard;
  if (s.mpi) return;  // a Session came first
  if (!pmpi::resolve()) {
    log_error("MPI functions not found; MPI calls are not traced");
    return;
  }
  pmpi::Comm_rank(MPI_COMM_WORLD, &s.rank);
  pmpi::Comm_size(MPI_COMM_WORLD, &s.size);
  // A communicator of our own, so the tracer's messages never meet the
  // application's.
  s.private_comm = piggyback::make_private_comm(MPI_COMM_WORLD);
  ucm_bridge_attach();  // Open MPI's UCX PML loads libucm in MPI_Init
  start_job(s, true);
}

// MPI-4 Sessions: a program that never calls MPI_Init has no
// MPI_COMM_WORLD. The tracer opens a session of its own and makes its
// private communicator from the world process set; the trace is written
// when the application finalizes its last session (or at exit). Not pruned.
#if MPIOR_HAVE_SESSIONS
void session_sessions_init() noexcept {
  Session& s = S();
  TracerGuard guard;
  ++s.app_sessions;
  if (s.mpi) return;
  if (!pmpi::resolve()) return;
  MPI_Group world = MPI_GROUP_NULL;
  if (pmpi::Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s.session) != MPI_SUCCESS ||
      pmpi::Group_from_session_pset(s.session, "mpi://WORLD", &world) != MPI_SUCCESS ||
      pmpi::Comm_create_from_group(world, "org.mpior.private", MPI_INFO_NULL, MPI_ERRORS_RETURN, &s.private_comm) !=
          MPI_SUCCESS) {
    log_error("cannot open an MPI session of the tracer's; MPI calls are not traced");
    return;
  }
  state().set_world_group(world);
  s.sessions = true;
  pmpi::Comm_rank(s.private_comm, &s.rank);
  pmpi::Comm_size(s.private_comm, &s.size);
  ucm_bridge_attach();
  start_job(s, false);
}

void session_sessions_finalize() noexcept {
  Session& s = S();
  if (s.app_sessions > 0) --s.app_sessions;
  if (!s.sessions || s.app_sessions > 0) return;
  session_mpi_finalize();
  TracerGuard guard;
  if (s.session != MPI_SESSION_NULL) pmpi::Session_finalize(&s.session);
  s.sessions = false;
}
#else
// Open MPI 4.1 has no Sessions (MPI-3.1).
void session_sessions_init() noexcept {}
void session_sessions_finalize() noexcept {}
#endif

void session_mpi_finalize() noexcept {
  Session& s = S();
  TracerGuard guard;
  if (s.private_comm == MPI_COMM_NULL) return;
  if (s.pruning)
    log_info("rank {}: pruning exchanged {} collective decisions, kept {} on a streak without one", s.rank,
             piggyback::pruner().exchanged(), piggyback::pruner().skipped());
  piggyback::pruner().finish();
  crash::stop();
  int ok = 0;
  std::vector<trace::TraceFileRanks> layout;
  if (aggregate::enabled() && s.writable) {
    // The rank's state on disk is made current first: a rank killed during
    // the aggregation (and every other rank, which its launcher then kills)
    // leaves everything up to MPI_Finalize, not its last periodic flush.
    session::write_rank(false);
    aggregate::Result r = aggregate::finalize({s.dir, s.rank, s.size, s.job_id, s.private_comm});
    ok = r.written;
    layout = std::move(r.layout);
  } else {
    ok = session::write_rank(true);
  }
  std::vector<int> oks(s.rank == 0 ? size_t(s.size) : 1);
  pmpi::Gather(&ok, 1, MPI_INT, oks.data(), 1, MPI_INT, 0, s.private_comm);
  if (s.rank == 0 && s.writable) {
    std::vector<int32_t> written;
    for (int r = 0; r < s.size; ++r)
      if (oks[size_t(r)]) written.push_back(r);
    if (int(written.size()) != s.size)
      log_error("{} of {} ranks could not write their trace to {}", s.size - int(written.size()), s.size, s.dir);
    write_job(trace::JobState::complete, std::move(written), std::move(layout));
  }
  pmpi::Comm_free(&s.private_comm);
  s.finalized = true;
  journal::finish();
}

}  // namespace mpi

}  // namespace mpior::preload
