/* mpi_families' communicator modes (issue 11): MPI_Comm_idup,
 * communicators made and freed one after another, intercommunicators, and
 * attributes with copy and delete callbacks. */
#include <mpi.h>
#include <stdio.h>

#include "common.h"
#include "mpi_families.h"

long idup(void) {
  MPI_Comm d;
  MPI_Request r;
  /* the others post their idup before a synchronous send that rank 0 takes
   * before posting its own: an idup must not block (nor its replay) */
  int token = rank;
  if (rank == 0) {
    for (int i = 1; i < size; ++i) MPI_Recv(&token, 1, MPI_INT, i, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Comm_idup(MPI_COMM_WORLD, &d, &r);
  } else {
    MPI_Comm_idup(MPI_COMM_WORLD, &d, &r);
    MPI_Ssend(&token, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
  }
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
  MPI_Sendrecv(&rank, 1, MPI_INT, right, 0, &got, 1, MPI_INT, left, 0, d, MPI_STATUS_IGNORE);
  long t = sum_all(d, got);
  MPI_Comm_free(&d);
  return t;
}

/* More communicators one after another than MPI holds at once (MPICH has
 * 2,048 context ids), each used, a split of some, and a receive completed
 * after its communicator's free (MPICH's comm/cmfree2). */
long comm_cycle(void) {
  long t = 0;
  for (int i = 0; i < 1500; ++i) {
    MPI_Comm d, s;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    if (i % 4 == 0) {
      MPI_Comm_split(d, rank % 2, rank, &s);
      int sr, ss, got = -1;
      MPI_Comm_rank(s, &sr);
      MPI_Comm_size(s, &ss);
      MPI_Sendrecv(&i, 1, MPI_INT, (sr + 1) % ss, 0, &got, 1, MPI_INT, (sr + ss - 1) % ss, 0, s, MPI_STATUS_IGNORE);
      t += got;
      MPI_Comm_free(&s);
    }
    t += sum_all(d, 1);
    MPI_Comm_free(&d);
  }
  MPI_Comm d;
  MPI_Request r;
  int late = -1, right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  MPI_Irecv(&late, 1, MPI_INT, left, 4, d, &r);
  MPI_Send(&rank, 1, MPI_INT, right, 4, d);
  MPI_Comm_free(&d);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  return sum_all(MPI_COMM_WORLD, t + late);
}

long intercomm(void) {
  MPI_Comm half, inter, merged;
  int color = rank % 2;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 5, &inter);
  int hr;
  MPI_Comm_rank(half, &hr);
  long v = 0;
  /* group 0's rank 0 broadcasts to group 1 */
  if (color == 0) {
    v = 77;
    MPI_Bcast(&v, 1, MPI_LONG, hr == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
  } else {
    MPI_Bcast(&v, 1, MPI_LONG, 0, inter);
  }
  /* nonblocking rooted ones: group 1's rank 0 broadcasts to group 0, which
   * reduces to group 1's rank 0 */
  long w = color == 1 ? 5 : 0, red = 0, one = rank + 1;
  int root_side = color == 1 ? (hr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  MPI_Request ir[2];
  MPI_Ibcast(&w, 1, MPI_LONG, root_side, inter, &ir[0]);
  MPI_Ireduce(&one, &red, 1, MPI_LONG, MPI_SUM, root_side, inter, &ir[1]);
  /* group 1's other member takes no part: it waits for a message group 0
   * sends once its broadcast arrived (a replay meeting both groups there
   * would deadlock) */
  int rsz;
  MPI_Comm_remote_size(inter, &rsz);
  long extra = 0;
  if (color == 1 && hr == 1 && rsz > 1) MPI_Recv(&extra, 1, MPI_LONG, 1, 6, inter, MPI_STATUS_IGNORE);
  MPI_Waitall(2, ir, MPI_STATUSES_IGNORE);
  if (color == 0 && hr == 1 && rsz > 1) MPI_Send(&w, 1, MPI_LONG, 1, 6, inter);
  v += extra;
  /* alltoallv across: its count and displacement arrays have the remote
   * group's size (at 3 ranks, not the local group's) */
  int *counts = malloc(rsz * sizeof(int)), *displs = malloc(rsz * sizeof(int));
  long *out = malloc(rsz * sizeof(long)), *in = malloc(rsz * sizeof(long));
  for (int i = 0; i < rsz; ++i) counts[i] = 1, displs[i] = i, out[i] = rank * 10 + i, in[i] = 0;
  MPI_Alltoallv(out, counts, displs, MPI_LONG, in, counts, displs, MPI_LONG, inter);
  for (int i = 0; i < rsz; ++i) v += in[i];
  free(counts), free(displs), free(out), free(in);
  if (color == 1 && hr == 0) v += red; /* group 0's ranks plus one each */
  if (color == 0) v += w;
  /* point to point across: local rank i of each group with remote rank i */
  int rsize;
  MPI_Comm_remote_size(inter, &rsize);
  long got = -1;
  if (hr < rsize) {
    long mine = rank;
    MPI_Sendrecv(&mine, 1, MPI_LONG, hr, 4, &got, 1, MPI_LONG, hr, 4, inter, MPI_STATUS_IGNORE);
  }
  MPI_Intercomm_merge(inter, color, &merged);
  long t = sum_all(merged, v + got);
  MPI_Comm_free(&merged);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  return t;
}

static int copies = 0, deletes = 0;
static int copy_fn(MPI_Comm c, int key, void* extra, void* in, void* out, int* flag) {
  (void)c, (void)key, (void)extra;
  ++copies;
  *(void**)out = in;
  *flag = 1;
  return MPI_SUCCESS;
}
static int delete_fn(MPI_Comm c, int key, void* val, void* extra) {
  (void)c, (void)key, (void)val, (void)extra;
  ++deletes;
  return MPI_SUCCESS;
}

long attr(void) {
  int key;
  MPI_Comm_create_keyval(copy_fn, delete_fn, &key, NULL);
  MPI_Comm_set_attr(MPI_COMM_WORLD, key, (void*)1);
  MPI_Comm d, s;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  MPI_Comm_split(d, 0, rank, &s); /* split copies nothing */
  MPI_Comm_free(&s);
  MPI_Comm_free(&d);
  MPI_Comm_delete_attr(MPI_COMM_WORLD, key);
  MPI_Comm_free_keyval(&key);
  return sum_all(MPI_COMM_WORLD, copies * 100 + deletes);
}
