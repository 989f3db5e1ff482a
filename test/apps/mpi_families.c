/* One family of MPI calls per mode (issue 11): each mode computes something
 * with the family's calls, writes it to out_<rank>.txt and prints a summary
 * from rank 0, so a traced run can be compared with an untraced one.
 *
 *   mpi_families MODE      (MODE: persistent ibsend mprobe cancel requests bypass icoll
 *                           neighbor topology partitioned idup intercomm attr sessions
 *                           grequest threads types comm_cycle)
 *
 * The MPI-4 calls (persistent collectives, Sessions) are built only where
 * mpi.h is MPI-4 (MPICH 4; Open MPI 4.1 is MPI-3.1): there the persistent and
 * icoll and topology modes run their MPI-3 part alone, and the sessions and
 * partitioned modes say they need MPI-4 and exit 2. */
#include "mpi_families.h"

#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

int rank, size;

static void write_result(const char* mode, long value) {
  char name[64];
  snprintf(name, sizeof name, "out_%d.txt", rank);
  FILE* f = fopen(name, "w");
  CHECK(f);
  fprintf(f, "%s %ld\n", mode, value);
  fclose(f);
}

long sum_all(MPI_Comm comm, long v) {
  long s = 0;
  MPI_Allreduce(&v, &s, 1, MPI_LONG, MPI_SUM, comm);
  return s;
}

static long persistent(void) {
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int out = 0, in = 0;
  MPI_Request r[2];
  MPI_Send_init(&out, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &r[0]);
  MPI_Recv_init(&in, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &r[1]);
  long total = 0;
  for (int i = 0; i < 5; ++i) {
    out = rank * 10 + i;
    if (i % 2) {
      MPI_Startall(2, r);
    } else {
      MPI_Start(&r[1]);
      MPI_Start(&r[0]);
    }
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    total += in;
  }
  MPI_Wait(&r[0], MPI_STATUS_IGNORE); /* inactive: completes at once */
  /* A receive never started: an empty status, no source (MPICH's pt2pt/inactivereq) */
  for (int k = 0; k < 2; ++k) { /* from the left neighbour, from anyone */
    MPI_Request never;
    MPI_Status empty;
    MPI_Recv_init(&in, 1, MPI_INT, k ? MPI_ANY_SOURCE : left, 8, MPI_COMM_WORLD, &never);
    int done = 0;
    MPI_Test(&never, &done, &empty);
    CHECK(done && empty.MPI_SOURCE == MPI_ANY_SOURCE);
    MPI_Wait(&never, &empty);
    CHECK(empty.MPI_SOURCE == MPI_ANY_SOURCE && empty.MPI_TAG == MPI_ANY_TAG);
    MPI_Request_free(&never);
  }
  MPI_Request_free(&r[0]);
  MPI_Request_free(&r[1]);
#if MPI_VERSION >= 4
  /* MPI-4 persistent collective */
  MPI_Request c;
  long v = rank + 1, s = 0;
  MPI_Allreduce_init(&v, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &c);
  for (int i = 0; i < 3; ++i) {
    MPI_Start(&c);
    MPI_Wait(&c, MPI_STATUS_IGNORE);
    total += s;
  }
  MPI_Request_free(&c);
  /* Started in the other order on odd ranks: MPI matches persistent
   * collectives' starts by the order of their inits. */
  MPI_Request two[2];
  long b = 0, w = rank, top = 0;
  MPI_Bcast_init(&b, 1, MPI_LONG, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &two[0]);
  MPI_Allreduce_init(&w, &top, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &two[1]);
  for (int i = 0; i < 3; ++i) {
    if (rank == 0) b = 100 + i;
    MPI_Start(&two[rank % 2]);
    MPI_Start(&two[1 - rank % 2]);
    MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
    total += b + top;
  }
  MPI_Request_free(&two[0]);
  MPI_Request_free(&two[1]);
#endif
  return sum_all(MPI_COMM_WORLD, total);
}

static long ibsend(void) {
  int bufsize = 4 * (MPI_BSEND_OVERHEAD + 64);
  void* buf = malloc((size_t)bufsize);
  MPI_Buffer_attach(buf, bufsize);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int v = rank, got = -1, got2 = -1;
  MPI_Request r[2];
  MPI_Ibsend(&v, 1, MPI_INT, right, 1, MPI_COMM_WORLD, &r[0]);
  MPI_Recv(&got, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  /* Irsend: the receive is posted first, a barrier says so */
  MPI_Irecv(&got2, 1, MPI_INT, left, 2, MPI_COMM_WORLD, &r[1]);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Irsend(&v, 1, MPI_INT, right, 2, MPI_COMM_WORLD, &r[0]);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  MPI_Buffer_detach(&buf, &bufsize);
  free(buf);
  return sum_all(MPI_COMM_WORLD, got + got2);
}

static long mprobe(void) {
  long total = 0;
  if (rank == 0) {
    for (int k = 0; k < 2 * (size - 1); ++k) {
      MPI_Message m;
      MPI_Status st;
      int n = 0, flag = 0;
      if (k % 2) {
        while (!flag) MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st);
      } else {
        MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st);
      }
      MPI_Get_count(&st, MPI_INT, &n);
      int* data = malloc(sizeof(int) * (size_t)n);
      if (k % 4 == 1) {
        MPI_Request r;
        MPI_Imrecv(data, n, MPI_INT, &m, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      } else {
        MPI_Mrecv(data, n, MPI_INT, &m, MPI_STATUS_IGNORE);
      }
      for (int i = 0; i < n; ++i) total += data[i];
      free(data);
    }
  } else {
    int data[8];
    for (int i = 0; i < 8; ++i) data[i] = rank * 100 + i;
    MPI_Send(data, rank + 1, MPI_INT, 0, rank, MPI_COMM_WORLD);
    MPI_Send(data, 8, MPI_INT, 0, 50 + rank, MPI_COMM_WORLD);
  }
  MPI_Bcast(&total, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  return total;
}

static long cancel(void) {
  int got = -1, v = rank;
  MPI_Request r;
  MPI_Status st;
  int cancelled = 0;
  /* a receive nobody sends to, cancelled */
  MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &r);
  MPI_Cancel(&r);
  MPI_Wait(&r, &st);
  MPI_Test_cancelled(&st, &cancelled);
  /* a receive that a message matches before the cancel can take it */
  int c2 = 0;
  if (rank == 0) {
    MPI_Irecv(&got, 1, MPI_INT, 1, 97, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&r, &st); /* done, not cancelled */
    MPI_Test_cancelled(&st, &c2);
  } else {
    if (rank == 1) MPI_Send(&v, 1, MPI_INT, 0, 97, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
  }
#ifdef MPICH_VERSION
  /* a synchronous send to oneself nobody receives, cancelled and freed (a
   * replay that sent it would wait for it at the end) */
  MPI_Request s;
  MPI_Issend(&v, 1, MPI_INT, 0, 98, MPI_COMM_SELF, &s);
  MPI_Cancel(&s);
  MPI_Request_free(&s);
#endif
  /* then ordinary traffic on the same communicator */
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Sendrecv(&v, 1, MPI_INT, right, 3, &got, 1, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return sum_all(MPI_COMM_WORLD, cancelled * 1000 + c2 * 100 + got);
}

/* The MPI library's own PMPI_Send, found through a function the tracer does
 * not wrap: the Open MPI tracer wraps the PMPI_* names too (its Fortran
 * bindings call them), so a plain PMPI_Send call would still be traced. */
typedef int (*send_fn)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
static send_fn untraced_send(void) {
  Dl_info info;
  CHECK(dladdr((void*)&MPI_Get_library_version, &info) && info.dli_fname);
  void* lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  CHECK(lib);
  send_fn f = (send_fn)dlsym(lib, "PMPI_Send");
  CHECK(f);
  return f;
}

/* Requests freed while active, and a message sent behind the tracer's back
 * (the library's PMPI_Send: no auxiliary message): nothing may wait for ever. */
static long requests(int bypass) {
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int v = rank, got = -1, got2 = -1;
  MPI_Request r;
  MPI_Irecv(&got, 1, MPI_INT, left, 11, MPI_COMM_WORLD, &r);
  MPI_Request_free(&r);
  MPI_Isend(&v, 1, MPI_INT, right, 11, MPI_COMM_WORLD, &r);
  MPI_Request_free(&r);
  MPI_Barrier(MPI_COMM_WORLD);
  if (bypass && rank == 1) untraced_send()(&v, 1, MPI_INT, 0, 12, MPI_COMM_WORLD);
  if (bypass && rank == 0) MPI_Recv(&got2, 1, MPI_INT, 1, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD); /* the freed receive has its message by now */
  int flag = 0;
  MPI_Request_get_status(MPI_REQUEST_NULL, &flag, MPI_STATUS_IGNORE);
  /* A receive completed after its communicator was freed (MPI frees it when
   * its pending operations are done). */
  MPI_Comm dup;
  MPI_Request two[2];
  int late = -1;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Irecv(&late, 1, MPI_INT, left, 13, dup, &two[0]);
  MPI_Isend(&v, 1, MPI_INT, right, 13, dup, &two[1]);
  MPI_Comm_free(&dup);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
  return sum_all(MPI_COMM_WORLD, got + got2 + flag + 100 * late);
}

static long icoll(void) {
  long v = rank + 1, s = 0, b = rank == 1 ? 42 : 0, g[64];
  MPI_Request r[4];
  MPI_Iallreduce(&v, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r[0]);
  MPI_Ibcast(&b, 1, MPI_LONG, 1 % size, MPI_COMM_WORLD, &r[1]);
  MPI_Igather(&v, 1, MPI_LONG, g, 1, MPI_LONG, 0, MPI_COMM_WORLD, &r[2]);
  MPI_Ibarrier(MPI_COMM_WORLD, &r[3]);
  MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
  long gs = 0;
  if (rank == 0)
    for (int i = 0; i < size; ++i) gs += g[i];
#if MPI_VERSION >= 4
  MPI_Request p;
  MPI_Bcast_init(&gs, 1, MPI_LONG, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &p);
  MPI_Start(&p);
  MPI_Wait(&p, MPI_STATUS_IGNORE);
  MPI_Request_free(&p);
#else
  MPI_Bcast(&gs, 1, MPI_LONG, 0, MPI_COMM_WORLD);
#endif
  return s * 10000 + b * 100 + gs;
}

static long neighbor(void) {
  int dims[1] = {size}, periods[1] = {1};
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
  int me;
  MPI_Comm_rank(cart, &me);
  int out = me, in[2] = {-1, -1}, in2[2] = {-1, -1}, out2[2] = {me, me};
  MPI_Neighbor_allgather(&out, 1, MPI_INT, in, 1, MPI_INT, cart);
  MPI_Request r;
  MPI_Ineighbor_alltoall(out2, 1, MPI_INT, in2, 1, MPI_INT, cart, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  long v = in[0] + in[1] + in2[0] + in2[1];
  long t = sum_all(cart, v);
  MPI_Comm_free(&cart);
  return t;
}

#if MPI_VERSION >= 4
/* Partitioned communication: even ranks send 4 partitions to the odd rank
 * above, three times; the large-count forms of the newer collectives. */
static long partitioned(void) {
  enum { kParts = 4, kEach = 8 };
  long buf[kParts * kEach] = {0};
  long got = 0;
  int peer = rank % 2 == 0 ? rank + 1 : rank - 1;
  MPI_Request r = MPI_REQUEST_NULL;
  if (peer < size) {
    if (rank % 2 == 0)
      MPI_Psend_init(buf, kParts, kEach, MPI_LONG, peer, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    else
      MPI_Precv_init(buf, kParts, kEach, MPI_LONG, peer, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    for (int it = 0; it < 3; ++it) {
      MPI_Start(&r);
      if (rank % 2 == 0) {
        for (int i = 0; i < kParts * kEach; ++i) buf[i] = rank * 1000 + it * 100 + i;
        int last[1] = {3};
        MPI_Pready(0, r);
        MPI_Pready_range(1, 2, r);
        MPI_Pready_list(1, last, r);
      } else {
        int arrived = 0;
        while (!arrived) MPI_Parrived(r, 0, &arrived);
      }
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      if (rank % 2 == 1)
        for (int i = 0; i < kParts * kEach; ++i) got += buf[i];
    }
    MPI_Request_free(&r);
  }
  /* nonblocking send-receive around a ring */
  long ring_in = -1, ring_out = rank, swap = rank;
  MPI_Request q, q2;
  MPI_Isendrecv(&ring_out, 1, MPI_LONG, (rank + 1) % size, 8, &ring_in, 1, MPI_LONG, (rank + size - 1) % size, 8,
                MPI_COMM_WORLD, &q);
  MPI_Isendrecv_replace(&swap, 1, MPI_LONG, (rank + size - 1) % size, 9, (rank + 1) % size, 9, MPI_COMM_WORLD, &q2);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Wait(&q2, MPI_STATUS_IGNORE);
  got += ring_in * 10 + swap;
  long v = rank, s = 0, all[64];
  MPI_Iallreduce_c(&v, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Allgather_init_c(&v, 1, MPI_LONG, all, 1, MPI_LONG, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
  MPI_Start(&q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Request_free(&q);
  return sum_all(MPI_COMM_WORLD, got) + s + all[size - 1];
}
#endif

/* Neighbourhood collectives on a distributed graph (a chain 0 -> 1 -> ...)
 * and a graph (a ring), blocking, nonblocking, persistent and large-count;
 * rooted collectives on an intercommunicator with MPI_ROOT/MPI_PROC_NULL. */
static long topology(void) {
  int src = rank - 1, dst = rank + 1;
  int nin = src >= 0, nout = dst < size;
  MPI_Comm chain, ring;
  int weight[1] = {1}; /* weighted: Open MPI's MPI_UNWEIGHTED trips gcc's overread check */
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, &src, weight, nout, &dst, weight, MPI_INFO_NULL, 0, &chain);
  long mine = rank + 1, from = 0, t = 0;
  MPI_Neighbor_allgather(&mine, 1, MPI_LONG, &from, 1, MPI_LONG, chain);
  t += from;
  MPI_Request r;
  MPI_Ineighbor_allgather(&mine, 1, MPI_LONG, &from, 1, MPI_LONG, chain, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  t += from;
#if MPI_VERSION >= 4
  MPI_Neighbor_allgather_c(&mine, 1, MPI_LONG, &from, 1, MPI_LONG, chain);
  t += from;
  MPI_Neighbor_allgather_init(&mine, 1, MPI_LONG, &from, 1, MPI_LONG, chain, MPI_INFO_NULL, &r);
  MPI_Start(&r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  MPI_Request_free(&r);
  t += from;
#endif
  int index[64], edges[128];
  for (int i = 0; i < size; ++i) {
    index[i] = 2 * (i + 1);
    edges[2 * i] = (i + size - 1) % size;
    edges[2 * i + 1] = (i + 1) % size;
  }
  MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &ring);
  long two[2] = {0, 0};
  MPI_Neighbor_allgather(&mine, 1, MPI_LONG, two, 1, MPI_LONG, ring);
  t += two[0] + two[1];
  MPI_Comm_free(&ring);
  MPI_Comm_free(&chain);
  /* intercommunicator: evens and odds; group 0's rank 0 broadcasts, group
   * 1's rank 0 is the root of a reduce from group 0 */
  MPI_Comm half, inter;
  int color = rank % 2, hr;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 6, &inter);
  MPI_Comm_rank(half, &hr);
  long b = color == 0 ? 55 : 0, red = 0;
  MPI_Bcast(&b, 1, MPI_LONG, color == 0 ? (hr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter);
  MPI_Reduce(&mine, &red, 1, MPI_LONG, MPI_SUM, color == 1 ? (hr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  return sum_all(MPI_COMM_WORLD, t + b + red);
}

static long grequest_value;
static int gq_query(void* extra, MPI_Status* st) {
  (void)extra;
  MPI_Status_set_elements(st, MPI_BYTE, 0);
  MPI_Status_set_cancelled(st, 0);
  st->MPI_SOURCE = MPI_UNDEFINED;
  st->MPI_TAG = MPI_UNDEFINED;
  return MPI_SUCCESS;
}
static int gq_free(void* extra) {
  (void)extra;
  return MPI_SUCCESS;
}
static int gq_cancel(void* extra, int done) {
  (void)extra, (void)done;
  return MPI_SUCCESS;
}
static void* gq_worker(void* arg) {
  grequest_value = rank * 3;
  MPI_Grequest_complete(*(MPI_Request*)arg);
  return NULL;
}

static long grequest(void) {
  MPI_Request r;
  MPI_Grequest_start(gq_query, gq_free, gq_cancel, NULL, &r);
  pthread_t t;
  pthread_create(&t, NULL, gq_worker, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  pthread_join(t, NULL);
  return sum_all(MPI_COMM_WORLD, grequest_value);
}

static void* ring_worker(void* arg) {
  int tag = *(int*)arg, right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
  for (int i = 0; i < 20; ++i) {
    int v = rank * 1000 + tag * 100 + i;
    MPI_Sendrecv(&v, 1, MPI_INT, right, tag, &got, 1, MPI_INT, left, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  *(int*)arg = got;
  return NULL;
}

static long threads(void) {
  pthread_t t[2];
  int arg[2] = {0, 1};
  for (int i = 0; i < 2; ++i) pthread_create(&t[i], NULL, ring_worker, &arg[i]);
  for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
  return sum_all(MPI_COMM_WORLD, arg[0] + arg[1]);
}

static int sessions_main(void) {
#if MPI_VERSION < 4
  fprintf(stderr, "sessions: this MPI is MPI-%d.%d, Sessions need MPI-4\n", MPI_VERSION, MPI_SUBVERSION);
  return 2;
#else
  MPI_Session s;
  MPI_Group g;
  MPI_Comm c;
  MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
  MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
  MPI_Comm_create_from_group(g, "org.mpior.test", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
  MPI_Comm_rank(c, &rank);
  MPI_Comm_size(c, &size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
  MPI_Sendrecv(&rank, 1, MPI_INT, right, 0, &got, 1, MPI_INT, left, 0, c, MPI_STATUS_IGNORE);
  long t = sum_all(c, got);
  write_result("sessions", t);
  if (rank == 0) printf("sessions %ld\n", t);
  MPI_Comm_free(&c);
  MPI_Group_free(&g);
  MPI_Session_finalize(&s);
  return 0;
#endif
}

/* Message sizes in bytes of predefined and derived datatypes, with a derived
 * type freed and another made after it (MPI may give it the same handle):
 * ranks pair up (0-1, 2-3), the even one sends 12, 16, 12, 40 bytes. */
static long types(void) {
  int peer = rank ^ 1;
  if (peer >= size) return 0;
  int ints[3] = {rank, 2, 3};
  double doubles[5] = {1, 2, 3, 4, 5};
  MPI_Datatype three_ints, five_doubles;
  MPI_Type_contiguous(3, MPI_INT, &three_ints);
  MPI_Type_commit(&three_ints);
  long got = 0;
  if (rank % 2 == 0) {
    MPI_Send(ints, 3, MPI_INT, peer, 1, MPI_COMM_WORLD);
    MPI_Send(doubles, 2, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD);
    MPI_Send(ints, 1, three_ints, peer, 3, MPI_COMM_WORLD);
  } else {
    MPI_Status st;
    MPI_Recv(ints, 3, MPI_INT, peer, 1, MPI_COMM_WORLD, &st);
    MPI_Recv(doubles, 2, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, &st);
    MPI_Request r;
    MPI_Irecv(ints, 1, three_ints, peer, 3, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
    got += ints[0];
  }
  MPI_Type_free(&three_ints);
  MPI_Type_contiguous(5, MPI_DOUBLE, &five_doubles);
  MPI_Type_commit(&five_doubles);
  if (rank % 2 == 0) {
    MPI_Send(doubles, 1, five_doubles, peer, 4, MPI_COMM_WORLD);
  } else {
    MPI_Recv(doubles, 1, five_doubles, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    got += (long)doubles[4];
  }
  MPI_Type_free(&five_doubles);
  return sum_all(MPI_COMM_WORLD, got);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "persistent";
  if (!strcmp(mode, "sessions")) return sessions_main();
  int provided;
  MPI_Init_thread(&argc, &argv,
                  !strcmp(mode, "threads") || !strcmp(mode, "grequest") ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                  &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long v;
  if (!strcmp(mode, "persistent"))
    v = persistent();
  else if (!strcmp(mode, "ibsend"))
    v = ibsend();
  else if (!strcmp(mode, "mprobe"))
    v = mprobe();
  else if (!strcmp(mode, "cancel"))
    v = cancel();
  else if (!strcmp(mode, "requests"))
    v = requests(0);
  else if (!strcmp(mode, "bypass"))
    v = requests(1);
  else if (!strcmp(mode, "icoll"))
    v = icoll();
  else if (!strcmp(mode, "neighbor"))
    v = neighbor();
  else if (!strcmp(mode, "topology"))
    v = topology();
#if MPI_VERSION >= 4
  else if (!strcmp(mode, "partitioned"))
    v = partitioned();
#else
  else if (!strcmp(mode, "partitioned")) {
    fprintf(stderr, "partitioned: this MPI is MPI-%d.%d, partitioned communication needs MPI-4\n", MPI_VERSION,
            MPI_SUBVERSION);
    MPI_Finalize();
    return 2;
  }
#endif
  else if (!strcmp(mode, "idup"))
    v = idup();
  else if (!strcmp(mode, "intercomm"))
    v = intercomm();
  else if (!strcmp(mode, "comm_cycle"))
    v = comm_cycle();
  else if (!strcmp(mode, "attr"))
    v = attr();
  else if (!strcmp(mode, "grequest"))
    v = grequest();
  else if (!strcmp(mode, "threads"))
    v = threads();
  else if (!strcmp(mode, "types"))
    v = types();
  else {
    fprintf(stderr, "unknown mode %s\n", mode);
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 2;
  }
  write_result(mode, v);
  if (rank == 0) printf("%s %ld\n", mode, v);
  MPI_Finalize();
  return 0;
}
