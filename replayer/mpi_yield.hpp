// A replay thread's receives and final waits as nonblocking calls tested in
// a loop: a receive the plan never matches leaves its thread polling, and
// each test takes and gives back MPICH's global lock, so the watchdog's
// MPI_Test gets it between them. Collectives stay blocking: MPICH's
// MPI_Barrier is a shared-memory release/gather, which an MPI_Ibarrier
// tested with a yield after every test is much slower than.
#pragma once

#include <mpi.h>
#include <sched.h>

namespace mpior::replay {

// Between tests: busy at first, as MPICH's own progress loop (its
// MPIR_CVAR_POLLS_BEFORE_YIELD is 1000), then the core is yielded: a
// yield costs a system call, about a barrier's whole time idle.
class PollBackoff {
 public:
  void operator()() {
    if (++polls_ > 1000) sched_yield();
  }

 private:
  int polls_ = 0;
};

inline int waitall_yielding(int n, MPI_Request* requests) {
  PollBackoff backoff;
  for (int done = 0;;) {
    int rc = MPI_Testall(n, requests, &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS || done) return rc;
    backoff();
  }
}

inline int mprobe_yielding(int source, int tag, MPI_Comm comm, MPI_Message* msg, MPI_Status* status) {
  PollBackoff backoff;
  for (int found = 0;;) {
    int rc = MPI_Improbe(source, tag, comm, &found, msg, status);
    if (rc != MPI_SUCCESS || found) return rc;
    backoff();
  }
}

}  // namespace mpior::replay
