/* Scenarios of the MPIOR thesis for online pruning.
 *   fig15  (2 ranks) Figure 1.5: rank 0 writes, two barriers, rank 1 writes;
 *          the second barrier cannot change when rank 1's I/O is issued.
 *   fig14  (3 ranks) Figure 1.4: I/O on ranks 0 and 1 and barriers on {0,1},
 *          {1,2} and all; every barrier matters. A fifth barrier, after no
 *          I/O, does not.
 *   fig41  (2 ranks) Figure 4.1: two messages with the same source and tag
 *          received by two receives completed in reverse order; only the
 *          first message follows I/O.
 *   rooted (6 ranks) Bcast, Scatter, Reduce and Gather on the halves of the
 *          world (3 ranks each), with I/O by different members in between:
 *          some calls kept, some pruned, and Gathers whose root waited for
 *          only the member that had I/O.
 *   nbcoll (3 ranks) eight rounds of Iallreduce/Wait, Ibcast/Wait and (MPI-4)
 *          a persistent Allreduce started and waited; I/O before a few of
 *          them: those instances are kept, the repeats pruned.
 *   inline (3 ranks) Allreduce (SUM, MIN, MAX, LAND, MPI_IN_PLACE) and Bcast
 *          (contiguous, and a strided vector type) whose decision travels
 *          inside the call: values as untraced, I/O before some rounds.
 *   burst  (2 ranks) rank 0, after I/O, posts 200 sends alternating between
 *          MPI_COMM_WORLD and a duplicate before rank 1 receives any: more
 *          than a shared-memory ring holds, so later auxiliary messages take
 *          MPI, on two communicators sharing one shadow. Only the first
 *          send and its receive are kept.
 *   self   (2 ranks) Barrier, Gather, Scatter and Allreduce on MPI_COMM_SELF, Bcast on a split of one, each twice
 *          after I/O: they order no I/O (no other member), all pruned,
 *          decided without an exchange.
 *   gaps   (2 ranks) no I/O at all: 16 rounds of 3 ms of computation (a
 *          sleep), an Allreduce and a Barrier; 16 Allreduces in a row; 16
 *          rounds of rank 0 computing 3 ms and sending to rank 1. With
 *          MPIOR_PRUNE_GAP_US (default 1 ms), the Allreduce and the send after
 *          each computation are kept once their call site followed two in a
 *          row; the rest, and everything with MPIOR_PRUNE_GAP_US=0, pruned.
 *   member_wait (2 ranks) 24 Gathers of 256 KiB a rank (a rendezvous) to
 *          rank 0, which writes before each and on odd steps computes 30 ms
 *          first: rank 1, with no I/O, is pruned, and its waits for the
 *          root are left out of its computation; its calls' cost stays.
 *   streak (2 ranks) 64 rounds of a write on each rank and a Barrier, then
 *          2000 Barriers without I/O; 64 rounds of a write on rank 0 and a
 *          Scatter from it, then 500 Scatters without I/O. The Barriers
 *          and Scatters after I/O are all kept (most without a decision
 *          exchange: MPIOR_PRUNE_STREAK), the others pruned but for those
 *          still on the streak when the I/O stopped.
 * usage: pruning MODE */
#include <fcntl.h>
#include <mpi.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static int rank, size;

static void io(const char* tag) {
  char name[64];
  snprintf(name, sizeof name, "%s.%d", tag, rank);
  int fd = open(name, O_WRONLY | O_CREAT | O_APPEND, 0644);
  CHECK(fd >= 0 && write(fd, tag, strlen(tag)) == (ssize_t)strlen(tag) && close(fd) == 0);
}

/* A communicator of the ranks in `who` (a bit mask), MPI_COMM_NULL elsewhere. */
static MPI_Comm subset(unsigned who) {
  MPI_Comm c;
  MPI_Comm_split(MPI_COMM_WORLD, (who >> rank) & 1 ? 0 : MPI_UNDEFINED, rank, &c);
  return c;
}

static void fig15(void) {
  if (rank == 0) io("i1");
  MPI_Barrier(MPI_COMM_WORLD); /* B1: logged */
  MPI_Barrier(MPI_COMM_WORLD); /* B2: pruned */
  if (rank == 1) io("i2");
}

static void fig14(void) {
  MPI_Comm c01 = subset(0x3), c12 = subset(0x6);
  io("input"); /* making the communicators synchronised everyone: start from I/O, as the figure does */
  if (rank == 0) io("i1");
  if (c01 != MPI_COMM_NULL) MPI_Barrier(c01); /* B1 */
  if (c12 != MPI_COMM_NULL) MPI_Barrier(c12); /* B2 */
  if (rank == 1) io("i2");
  MPI_Barrier(MPI_COMM_WORLD); /* B3 */
  if (rank == 0) io("i3");
  MPI_Barrier(MPI_COMM_WORLD); /* B4 */
  MPI_Barrier(MPI_COMM_WORLD); /* B5: no I/O since B4, pruned */
  if (c01 != MPI_COMM_NULL) MPI_Comm_free(&c01);
  if (c12 != MPI_COMM_NULL) MPI_Comm_free(&c12);
}

static void fig41(void) {
  long a = 1, b = 2, got1 = 0, got2 = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    io("before");
    MPI_Send(&a, 1, MPI_LONG, 1, 1234, MPI_COMM_WORLD); /* follows I/O: logged */
    MPI_Send(&b, 1, MPI_LONG, 1, 1234, MPI_COMM_WORLD); /* does not */
  } else {
    MPI_Request r1, r2;
    MPI_Irecv(&got1, 1, MPI_LONG, 0, 1234, MPI_COMM_WORLD, &r1);
    MPI_Irecv(&got2, 1, MPI_LONG, 0, 1234, MPI_COMM_WORLD, &r2);
    MPI_Wait(&r2, MPI_STATUS_IGNORE);
    MPI_Wait(&r1, MPI_STATUS_IGNORE);
    CHECK(got1 == 1 && got2 == 2); /* non-overtaking: r1 got the first message */
    io("after");
  }
}

enum { kBurst = 200 };

static void burst(void) {
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  static long vals[kBurst];
  MPI_Request reqs[kBurst];
  if (rank == 0) {
    io("burst");
    for (int i = 0; i < kBurst; ++i) {
      vals[i] = i;
      MPI_Isend(&vals[i], 1, MPI_LONG, 1, i % 3, i % 2 ? dup : MPI_COMM_WORLD, &reqs[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* every send posted before the first receive */
    MPI_Waitall(kBurst, reqs, MPI_STATUSES_IGNORE);
  } else if (rank == 1) {
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < kBurst; ++i) {
      long got = -1;
      MPI_Recv(&got, 1, MPI_LONG, 0, i % 3, i % 2 ? dup : MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK(got == i);
    }
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Comm_free(&dup);
}

static void rooted(void) {
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank / 3, rank, &half);
  int hr, hs;
  MPI_Comm_rank(half, &hr);
  MPI_Comm_size(half, &hs);
  CHECK(hs == 3);
  long v = rank, sum = 0, all[3], one = 0, base = (rank / 3) * 3;
  for (int round = 0; round < 6; ++round) {
    if (hr == 1 + round % 2) io("gather"); /* one member has I/O to pass to the root */
    MPI_Gather(&v, 1, MPI_LONG, all, 1, MPI_LONG, 0, half);
    if (hr == 0) CHECK(all[0] == base && all[2] == base + 2);
    MPI_Reduce(&v, &sum, 1, MPI_LONG, MPI_SUM, 0, half);
    if (hr == 0) CHECK(sum == 3 * base + 3);
    if (hr == 0 && round % 2 == 0) io("bcast");
    long token = hr == 0 ? round : -1;
    MPI_Bcast(&token, 1, MPI_LONG, 0, half);
    CHECK(token == round);
    for (int i = 0; i < 3; ++i) all[i] = 100 * round + i;
    MPI_Scatter(all, 1, MPI_LONG, &one, 1, MPI_LONG, 2, half);
    CHECK(one == 100 * round + hr);
  }
  MPI_Comm_free(&half);
}

static void nbcoll(void) {
  long v = rank, sum = 0, token = 0, want = (long)size * (size - 1) / 2;
#if MPI_VERSION >= 4
  long psum = 0;
  MPI_Request p;
  MPI_Allreduce_init(&v, &psum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &p);
#endif
  for (int round = 0; round < 8; ++round) {
    MPI_Request r;
    if (rank == 1 && (round == 0 || round == 4)) io("nb_all"); /* this round's Iallreduce is kept */
    MPI_Iallreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(sum == want);
    if (rank == 0 && round == 2) io("nb_root");   /* this round's Ibcast is kept */
    if (rank == 1 && round == 5) io("nb_member"); /* a member's I/O: the Ibcast does not order it */
    token = rank == 0 ? round : -1;
    MPI_Ibcast(&token, 1, MPI_LONG, 0, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(token == round);
#if MPI_VERSION >= 4
    if (rank == 2 && round == 6) io("nb_start"); /* this round's start is kept */
    MPI_Start(&p);
    MPI_Wait(&p, MPI_STATUS_IGNORE);
    CHECK(psum == want);
#endif
  }
#if MPI_VERSION >= 4
  MPI_Request_free(&p);
#endif
}

static void inline_decisions(void) {
  MPI_Datatype every_other;
  MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  for (int round = 0; round < 6; ++round) {
    if (rank == round % size && round % 2 == 0) io("inline");
    long v = rank + round, sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == (long)size * (size - 1) / 2 + (long)size * round);
    double d[3] = {rank + 0.5, -rank - 0.25, round}, lo[3];
    MPI_Allreduce(d, lo, 3, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    CHECK(lo[0] == 0.5 && lo[1] == -(size - 1) - 0.25 && lo[2] == round);
    unsigned u[2] = {(unsigned)rank, 7u};
    MPI_Allreduce(MPI_IN_PLACE, u, 2, MPI_UNSIGNED, MPI_MAX, MPI_COMM_WORLD);
    CHECK(u[0] == (unsigned)size - 1 && u[1] == 7u);
    int yes = rank >= 0, all = 0;
    MPI_Allreduce(&yes, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    CHECK(all == 1);
    int grid[8];
    for (int i = 0; i < 8; ++i) grid[i] = rank == 1 ? 100 * round + i : -1;
    if (rank == 1 && round == 3) io("inline_root");     /* this Bcast is kept */
    MPI_Bcast(grid, 1, every_other, 1, MPI_COMM_WORLD); /* packed: elements 0, 2, 4, 6 */
    for (int i = 0; i < 8; ++i) CHECK(grid[i] == (i % 2 == 0 || rank == 1 ? 100 * round + i : -1));
    char text[32] = "";
    if (rank == 0) snprintf(text, sizeof text, "round %d", round);
    MPI_Bcast(text, (int)sizeof text, MPI_CHAR, 0, MPI_COMM_WORLD);
    char want[32];
    snprintf(want, sizeof want, "round %d", round);
    CHECK(!strcmp(text, want));
  }
  MPI_Type_free(&every_other);
}
static void self(void) {
  int mine = rank, got = -1;
  io("s1");
  MPI_Barrier(MPI_COMM_SELF);
  MPI_Barrier(MPI_COMM_SELF);
  io("s2");
  for (int i = 0; i < 2; ++i) MPI_Gather(&mine, 1, MPI_INT, &got, 1, MPI_INT, 0, MPI_COMM_SELF);
  CHECK(got == rank);
  io("s3");
  got = -1;
  for (int i = 0; i < 2; ++i) MPI_Scatter(&mine, 1, MPI_INT, &got, 1, MPI_INT, 0, MPI_COMM_SELF);
  CHECK(got == rank);
  io("s4");
  // The calls that carry their decision inline on larger communicators.
  for (int i = 0; i < 2; ++i) {
    got = -1;
    MPI_Allreduce(&mine, &got, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
    CHECK(got == rank);
  }
  MPI_Comm alone;  // a communicator of one that is not MPI_COMM_SELF
  MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &alone);
  io("s5");
  for (int i = 0; i < 2; ++i) {
    long token = 7 + i;
    MPI_Bcast(&token, 1, MPI_LONG, 0, alone);
    CHECK(token == 7 + i);
  }
  MPI_Comm_free(&alone);
}

static void sleep_ms(long ms) {
  struct timespec ts = {0, ms * 1000000};
  nanosleep(&ts, NULL);
}

static void computation(void) { sleep_ms(3); }

static void gaps(void) {
  int one = 1, sum = 0;
  for (int i = 0; i < 16; ++i) {
    computation();
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  for (int i = 0; i < 16; ++i) MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < 16; ++i) {
    if (rank == 0) {
      computation();
      MPI_Send(&i, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    } else if (rank == 1) {
      int got = -1;
      MPI_Recv(&got, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK(got == i);
    }
  }
}

static void member_wait(void) {
  enum { kDoubles = 32768 };
  double* mine = calloc(kDoubles, sizeof(double));
  double* all = rank == 0 ? calloc((size_t)kDoubles * (size_t)size, sizeof(double)) : NULL;
  CHECK(mine && (rank != 0 || all));
  for (int step = 0; step < 24; ++step) {
    if (rank == 0) {
      if (step % 2) sleep_ms(30);  // far above the calls' own cost, whatever the load
      io("member_wait");
    }
    MPI_Gather(mine, kDoubles, MPI_DOUBLE, all, kDoubles, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  }
  free(mine);
  free(all);
}

static void streak(void) {
  for (int i = 0; i < 64; ++i) {
    io("streak");
    MPI_Barrier(MPI_COMM_WORLD);
  }
  for (int i = 0; i < 2000; ++i) MPI_Barrier(MPI_COMM_WORLD);
  int* all = calloc((size_t)size, sizeof(int));
  CHECK(all);
  for (int i = 0; i < size; ++i) all[i] = i;
  for (int i = 0; i < 564; ++i) {
    if (rank == 0 && i < 64) io("streak");
    int mine = -1;
    MPI_Scatter(all, 1, MPI_INT, &mine, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(mine == rank);
  }
  free(all);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "fig15";
  if (!strcmp(mode, "fig15"))
    fig15();
  else if (!strcmp(mode, "fig14"))
    fig14();
  else if (!strcmp(mode, "fig41"))
    fig41();
  else if (!strcmp(mode, "rooted"))
    rooted();
  else if (!strcmp(mode, "burst"))
    burst();
  else if (!strcmp(mode, "nbcoll"))
    nbcoll();
  else if (!strcmp(mode, "inline"))
    inline_decisions();
  else if (!strcmp(mode, "self"))
    self();
  else if (!strcmp(mode, "gaps"))
    gaps();
  else if (!strcmp(mode, "member_wait"))
    member_wait();
  else if (!strcmp(mode, "streak"))
    streak();
  else
    CHECK(!"unknown mode");
  if (rank == 0) printf("pruning %s ranks=%d done\n", mode, size);
  MPI_Finalize();
  return 0;
}
