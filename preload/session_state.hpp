// What the session's parts share (session.cpp: load, exit, fork;
// session_write.cpp: the rank's trace and job record written;
// session_mpi.cpp: MPI_Init, Sessions, MPI_Finalize): the process's tracing
// state and the trace directory's bookkeeping. Private to preload/session*.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "preload/mpi_state.hpp"
#include "trace/model.hpp"

namespace mpior::preload::session_state {

struct Session {
  bool traced = false;     // this process records
  bool writable = false;   // and may write its trace
  bool child = false;      // started by a traced process (lineage.hpp): writes a child trace
  bool dir_ready = false;  // a standalone program's directory is prepared (at its first write)
  uint64_t serial = 0;     // a child's: tells its trace from other images of the same pid
  bool under_mpi = false;  // started by an MPI launcher: only a process that calls MPI_Init writes
  // Under MPI, the job of the traced standalone program that started the
  // launcher (a batch script, `timeout`): its trace moves aside for ours.
  uint64_t launcher_job = 0;
  bool mpi = false;
  bool finalized = false;
  bool pruning = false;
  bool written_at_exit = false;
  int rank = 0, size = 1;
  uint64_t job_id = 0;
  uint64_t events_written = 0;
  std::string dir;
  trace::ProcessInfo info;
  MPI_Comm private_comm = MPI_COMM_NULL;
#if MPIOR_HAVE_SESSIONS
  MPI_Session session = MPI_SESSION_NULL;  // the tracer's own (Sessions programs)
#endif
  bool sessions = false;  // traced through Sessions, not MPI_Init
  int app_sessions = 0;   // the application's sessions open
  int dir_lock = -1;
};

Session& S();

// MPIOR_PRUNE, MPIOR_CHILDREN, MPIOR_TRACE_DIR (declared in session.cpp).
bool prune_option();
bool children_option();
std::string trace_dir_option();

std::string job_subdir(const std::string& dir, uint64_t job_id);
// Makes the directory ready for this job: exists and writable. A directory
// that already holds a trace is never overwritten: the job writes to a
// subdirectory named by its id and says so. Returns an error text, empty if
// ready; dir is where the job writes.
std::string prepare_dir(std::string& dir, uint64_t job_id);
uint64_t new_job_id();
// The trace of the standalone program that started this job's launcher
// moves from dir, which it holds, to dir/job-<its id>/, so that the job
// writes where the user asked (the program follows: follow_moved_trace).
void move_launcher_trace(const std::string& dir, uint64_t launcher_job);
// A standalone program or child whose trace was moved aside by a job it
// launched writes there from now on.
void follow_moved_trace();
// mkdir -p; true when dir is a directory.
bool make_dirs(const std::string& dir);
// A standalone program's directory was taken over by a job started after it.
bool newer_job_in_dir();
// Writes job.mpior (atomically); false, logged, when it cannot.
bool write_job(trace::JobState state, std::vector<int32_t> written, std::vector<trace::TraceFileRanks> layout = {});

}  // namespace mpior::preload::session_state
