// The blocking MPI calls of a replay thread, made as nonblocking ones tested
// with a yield in between. MPICH (one global critical section) polls the
// network holding its lock for the whole of a blocking call: the watchdog's
// MPI_Test then waits for the lock behind a replay thread blocked in
// MPI_Mprobe, never runs a round, and a deadlocked plan hangs instead of
// being reported. Each test here takes and gives back the lock.
#pragma once

#include <mpi.h>
#include <sched.h>

namespace mpior::replay {

inline int waitall_yielding(int n, MPI_Request* requests) {
  for (int done = 0;;) {
    int rc = MPI_Testall(n, requests, &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS || done) return rc;
    sched_yield();
  }
}

// `started`: what the call that made the request returned.
inline int wait_yielding(int started, MPI_Request* request) {
  return started != MPI_SUCCESS ? started : waitall_yielding(1, request);
}

inline int barrier_yielding(MPI_Comm comm) {
  MPI_Request r;
  return wait_yielding(MPI_Ibarrier(comm, &r), &r);
}

inline int mprobe_yielding(int source, int tag, MPI_Comm comm, MPI_Message* msg, MPI_Status* status) {
  for (int found = 0;;) {
    int rc = MPI_Improbe(source, tag, comm, &found, msg, status);
    if (rc != MPI_SUCCESS || found) return rc;
    sched_yield();
  }
}

}  // namespace mpior::replay
