/* A parallel HDF5 time-step loop (built with h5pcc.mpich): every step each
 * rank writes its slab of a contiguous dataset collectively and its chunk of
 * a chunked dataset independently; at the end both are read back
 * collectively and checked. Usage: hdf5_steps STEPS. Writes steps.h5 and
 * prints a checksum on rank 0. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { M = 64 }; /* doubles per rank and step */

static void write_slab(hid_t dset, hid_t xfer, int step, int rank, const double* row) {
  hsize_t start[2] = {(hsize_t)step, (hsize_t)rank * M}, count[2] = {1, M};
  hid_t space = H5Dget_space(dset);
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
  hid_t mem = H5Screate_simple(2, count, NULL);
  H5Dwrite(dset, H5T_NATIVE_DOUBLE, mem, space, xfer, row);
  H5Sclose(mem);
  H5Sclose(space);
}

static double read_all(hid_t dset, hid_t xfer, int steps, int rank) {
  hsize_t start[2] = {0, (hsize_t)rank * M}, count[2] = {(hsize_t)steps, M};
  double* back = malloc(sizeof(double) * (size_t)steps * M);
  hid_t space = H5Dget_space(dset);
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
  hid_t mem = H5Screate_simple(2, count, NULL);
  H5Dread(dset, H5T_NATIVE_DOUBLE, mem, space, xfer, back);
  double sum = 0;
  for (int i = 0; i < steps * M; ++i) sum += back[i];
  H5Sclose(mem);
  H5Sclose(space);
  free(back);
  return sum;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, steps = argc > 1 ? atoi(argv[1]) : 10;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  hid_t file = H5Fcreate("steps.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  hsize_t dims[2] = {(hsize_t)steps, (hsize_t)size * M}, chunk[2] = {1, M};
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t plain = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_obj_track_times(plain, 0); /* no modification times: runs give equal files */
  hid_t contig = H5Dcreate2(file, "contiguous", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, plain, H5P_DEFAULT);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_obj_track_times(dcpl, 0);
  H5Pset_chunk(dcpl, 2, chunk);
  H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
  hid_t chunked = H5Dcreate2(file, "chunked", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  hid_t coll = H5Pcreate(H5P_DATASET_XFER), indep = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(coll, H5FD_MPIO_COLLECTIVE);
  H5Pset_dxpl_mpio(indep, H5FD_MPIO_INDEPENDENT);
  double row[M];
  for (int step = 0; step < steps; ++step) {
    for (int i = 0; i < M; ++i) row[i] = rank * 1e6 + step * 1e3 + i;
    write_slab(contig, coll, step, rank, row);
    write_slab(chunked, indep, step, rank, row);
  }
  double sums[2] = {read_all(contig, coll, steps, rank), read_all(chunked, coll, steps, rank)}, total[2];
  MPI_Reduce(sums, total, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("steps %d checksum %.1f %.1f\n", steps, total[0], total[1]);
  H5Pclose(coll);
  H5Pclose(indep);
  H5Pclose(dcpl);
  H5Pclose(plain);
  H5Dclose(chunked);
  H5Dclose(contig);
  H5Sclose(space);
  H5Fclose(file);
  H5Pclose(fapl);
  MPI_Finalize();
  return 0;
}
