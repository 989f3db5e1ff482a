/* Wildcard receives: rank 0 collects one message from every other rank with
 * MPI_ANY_SOURCE / MPI_ANY_TAG, through Recv, Irecv + Waitany and Irecv +
 * Waitsome; every rank then passes a token around a ring with Sendrecv and
 * with Isend/Irecv/Testall. Rank 0 writes what it received, by source.
 * usage: wildcard [rounds=3] */
#include <mpi.h>
#include <string.h>

#include "common.h"

/* On its own communicator: a wildcard receive there cannot take the ring's
 * messages, which may already be on their way to rank 0. */
static void collect(MPI_Comm comm, int rank, int size, long round, long* got, int mode) {
  if (rank != 0) {
    long v = rank * 100 + round;
    MPI_Send(&v, 1, MPI_LONG, 0, 10 + rank, comm);
    return;
  }
  int n = size - 1;
  long vals[64];
  MPI_Request reqs[64];
  MPI_Status sts[64];
  CHECK(n <= 64);
  if (mode == 0) {
    for (int i = 0; i < n; ++i) {
      MPI_Recv(&vals[i], 1, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &sts[i]);
      CHECK(sts[i].MPI_TAG == 10 + sts[i].MPI_SOURCE && vals[i] == sts[i].MPI_SOURCE * 100 + round);
      got[sts[i].MPI_SOURCE] = vals[i];
    }
    return;
  }
  for (int i = 0; i < n; ++i) MPI_Irecv(&vals[i], 1, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &reqs[i]);
  int done = 0;
  while (done < n) {
    int idx[64], outcount = 0;
    if (mode == 1) {
      MPI_Waitany(n, reqs, &idx[0], &sts[0]);
      outcount = 1;
    } else {
      MPI_Waitsome(n, reqs, &outcount, idx, sts);
    }
    for (int k = 0; k < outcount; ++k) {
      long v = vals[idx[k]];
      CHECK(v == sts[k].MPI_SOURCE * 100 + round && sts[k].MPI_TAG == 10 + sts[k].MPI_SOURCE);
      got[sts[k].MPI_SOURCE] = v;
    }
    done += outcount;
  }
}

static void ring(int rank, int size, long round) {
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  long out = rank + round, in = -1;
  MPI_Status st;
  MPI_Sendrecv(&out, 1, MPI_LONG, right, 5, &in, 1, MPI_LONG, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st);
  CHECK(in == left + round && st.MPI_SOURCE == left);
  MPI_Request r[2];
  MPI_Irecv(&in, 1, MPI_LONG, left, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(&out, 1, MPI_LONG, right, 6, MPI_COMM_WORLD, &r[1]);
  int flag = 0;
  while (!flag) MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);
  CHECK(in == left + round);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long rounds = arg_or(argc, argv, 1, 3);
  long got[64] = {0};
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  FILE* f = rank == 0 ? fopen("wildcard.txt", "w") : NULL;
  for (long r = 0; r < rounds; ++r) {
    collect(comm, rank, size, r, got, (int)(r % 3));
    if (rank == 0)
      for (int s = 1; s < size; ++s) fprintf(f, "round %ld from %d value %ld\n", r, s, got[s]);
    ring(rank, size, r);
    MPI_Barrier(comm); /* no rank sends round r+1's value before rank 0 has round r's */
  }
  MPI_Comm_free(&comm);
  if (rank == 0) {
    CHECK(fclose(f) == 0);
    printf("wildcard ranks=%d rounds=%ld verified\n", size, rounds);
  }
  MPI_Finalize();
  return 0;
}
