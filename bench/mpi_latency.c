/* MPI latency traced against untraced in the same run: run under
 * LD_PRELOAD=libmpior.so; the MPI_* calls go through the tracer, the MPI
 * library's own PMPI_* functions (the profiling interface the tracer itself
 * uses) do not. Reports the
 * median over repetitions of: a 1-byte ping-pong round trip between ranks 0
 * and 1, and an 8-byte MPI_Bcast, MPI_Allreduce and MPI_Iallreduce + MPI_Wait
 * over all ranks, and an MPI_Comm_dup + MPI_Comm_free pair of
 * MPI_COMM_WORLD (a tenth as many: MPICH's comm/ctxalloc does 400,000).
 * usage: mpirun -n 2 mpi_latency [iterations=10000] [repetitions=5] */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* The untraced calls are the MPI library's own PMPI_* functions, found
 * through a function the tracer does not wrap: the Open MPI tracer exports
 * the PMPI_* names too (its Fortran bindings call them). */
static struct {
  int (*send)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
  int (*recv)(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status*);
  int (*bcast)(void*, int, MPI_Datatype, int, MPI_Comm);
  int (*allreduce)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
  int (*iallreduce)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request*);
  int (*wait)(MPI_Request*, MPI_Status*);
  int (*dup)(MPI_Comm, MPI_Comm*);
  int (*free)(MPI_Comm*);
} raw;

static void* raw_fn(void* lib, const char* name) {
  void* f = dlsym(lib, name);
  if (!f) {
    fprintf(stderr, "mpi_latency: %s not found in the MPI library\n", name);
    exit(2);
  }
  return f;
}

static void resolve_raw(void) {
  Dl_info info;
  void* lib = dladdr((void*)&MPI_Get_library_version, &info) && info.dli_fname
                  ? dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)
                  : NULL;
  if (!lib) {
    fprintf(stderr, "mpi_latency: cannot find the MPI library\n");
    exit(2);
  }
  *(void**)&raw.send = raw_fn(lib, "PMPI_Send");
  *(void**)&raw.recv = raw_fn(lib, "PMPI_Recv");
  *(void**)&raw.bcast = raw_fn(lib, "PMPI_Bcast");
  *(void**)&raw.allreduce = raw_fn(lib, "PMPI_Allreduce");
  *(void**)&raw.iallreduce = raw_fn(lib, "PMPI_Iallreduce");
  *(void**)&raw.wait = raw_fn(lib, "PMPI_Wait");
  *(void**)&raw.dup = raw_fn(lib, "PMPI_Comm_dup");
  *(void**)&raw.free = raw_fn(lib, "PMPI_Comm_free");
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return v[n / 2];
}

/* Microseconds per operation of one timed loop. */
static double loop(int op, int traced, long n, int rank) {
  char byte = 0;
  double value = 1, sum = 0;
  MPI_Status st;
  PMPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (long i = 0; i < n; ++i) {
    if (op == 0 && rank < 2) {
      int peer = 1 - rank;
      if (rank == 0) {
        traced ? MPI_Send(&byte, 1, MPI_CHAR, peer, 0, MPI_COMM_WORLD)
               : raw.send(&byte, 1, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
        traced ? MPI_Recv(&byte, 1, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &st)
               : raw.recv(&byte, 1, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &st);
      } else {
        traced ? MPI_Recv(&byte, 1, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &st)
               : raw.recv(&byte, 1, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &st);
        traced ? MPI_Send(&byte, 1, MPI_CHAR, peer, 0, MPI_COMM_WORLD)
               : raw.send(&byte, 1, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
      }
    } else if (op == 1) {
      traced ? MPI_Bcast(&value, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD)
             : raw.bcast(&value, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    } else if (op == 2) {
      traced ? MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)
             : raw.allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    } else if (op == 3) {
      MPI_Request r;
      if (traced) {
        MPI_Iallreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      } else {
        raw.iallreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
        raw.wait(&r, MPI_STATUS_IGNORE);
      }
    } else if (op == 4) {
      MPI_Comm c;
      traced ? MPI_Comm_dup(MPI_COMM_WORLD, &c) : raw.dup(MPI_COMM_WORLD, &c);
      traced ? MPI_Comm_free(&c) : raw.free(&c);
    }
  }
  double us = (MPI_Wtime() - t0) * 1e6 / (double)n;
  double worst = 0;
  PMPI_Allreduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  resolve_raw();
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long n = argc > 1 ? atol(argv[1]) : 10000;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  if (reps > 32) reps = 32;
  const char* names[5] = {"ping-pong 1 B round trip", "MPI_Bcast 8 B", "MPI_Allreduce 8 B", "MPI_Iallreduce 8 B + Wait",
                          "Comm_dup + Comm_free"};
  if (rank == 0) printf("%-26s %12s %12s %12s %8s\n", "operation", "untraced us", "traced us", "added us", "ratio");
  for (int op = 0; op < 5; ++op) {
    double plain[32], traced[32];
    long iters = op == 4 ? (n + 9) / 10 : n;
    for (int r = 0; r < reps; ++r) {
      plain[r] = loop(op, 0, iters, rank);
      traced[r] = loop(op, 1, iters, rank);
    }
    double p = median(plain, reps), t = median(traced, reps);
    if (rank == 0) printf("%-26s %12.2f %12.2f %12.2f %8.3f\n", names[op], p, t, t - p, t / p);
  }
  MPI_Finalize();
  return 0;
}
