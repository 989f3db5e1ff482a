/* A program shaped like LAMMPS as the thesis traced it (§5): every step a
 * compute phase, a halo exchange with both neighbours and an Allreduce; every
 * `every` steps the ranks gather their atoms to rank 0, which broadcasts the
 * step's settings and writes a dump of many small fprintf lines.
 * usage: mpirun -n N lammps_shape [steps=400] [sweeps=20] [every=20] [lines=400]
 * prints on rank 0: elapsed_s <seconds from after MPI_Init to after MPI_Finalize> */
#include <mpi.h>
#include <string.h>

#include "shape_common.h"

enum { kCells = 20000, kHalo = 1024, kAtoms = 256 };

static void halo_exchange(double* cells, double* halo, int left, int right) {
  MPI_Sendrecv(cells + kCells - kHalo, kHalo, MPI_DOUBLE, right, 1, halo, kHalo, MPI_DOUBLE, left, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Sendrecv(cells, kHalo, MPI_DOUBLE, left, 2, halo + kHalo, kHalo, MPI_DOUBLE, right, 2, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
}

static void dump(FILE* out, long step, const double* atoms, int size, long lines) {
  fprintf(out, "ITEM: TIMESTEP\n%ld\nITEM: ATOMS id x y z\n", step);
  long n = (long)size * kAtoms;
  for (long i = 0; i < lines; ++i) {
    const double* a = atoms + (i % n);
    fprintf(out, "%ld %.6f %.6f %.6f\n", i + 1, a[0], a[0] * 0.5, a[0] * 0.25);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long steps = arg_or(argc, argv, 1, 400), sweeps = arg_or(argc, argv, 2, 20);
  long every = arg_or(argc, argv, 3, 20), lines = arg_or(argc, argv, 4, 400);
  double* cells = calloc(kCells, sizeof(double));
  double* halo = calloc(2 * kHalo, sizeof(double));
  double* atoms = rank == 0 ? calloc((size_t)size * kAtoms, sizeof(double)) : NULL;
  CHECK(cells && halo && (rank != 0 || atoms));
  for (long i = 0; i < kCells; ++i) cells[i] = (double)(rank + i % 7);
  FILE* out = rank == 0 ? fopen("lammps_shape.dump", "w") : NULL;
  CHECK(rank != 0 || out);
  int left = (rank + size - 1) % size, right = (rank + 1) % size;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = mono_s(), energy = 0;
  for (long s = 1; s <= steps; ++s) {
    double local = compute(cells, kCells, sweeps);
    halo_exchange(cells, halo, left, right);
    MPI_Allreduce(&local, &energy, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (s % every == 0) {
      MPI_Gather(cells, kAtoms, MPI_DOUBLE, atoms, kAtoms, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      long settings[2] = {s, lines};
      MPI_Bcast(settings, 2, MPI_LONG, 0, MPI_COMM_WORLD);
      if (rank == 0) dump(out, settings[0], atoms, size, settings[1]);
    }
  }
  if (rank == 0) CHECK(fclose(out) == 0);
  free(cells);
  free(halo);
  free(atoms);
  MPI_Finalize();
  if (rank == 0) printf("elapsed_s %.6f energy %.3g\n", mono_s() - t0, energy);
  return 0;
}
