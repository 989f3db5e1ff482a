/* IOR's -a HDF5 -c pattern on one shared file (built with h5pcc.mpich):
 * SEGMENTS segments, in each every rank writes its block of a contiguous
 * dataset in TRANSFERS collective writes; the file is closed, HDF5 dealing
 * its metadata entries over the ranks, then opened again and read back
 * collectively the same way. Usage: hdf5_coll SEGMENTS TRANSFERS [PER_SEGMENT]:
 * with PER_SEGMENT 1, a dataset of its own per segment, as IOR makes them
 * (more metadata entries, which HDF5 flushes in cache order, not by
 * address). Writes coll.h5. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { XFER = 512 }; /* doubles per transfer */

static void transfers(hid_t dset, hid_t xfer, int rank, int size, int segments, int count, int write) {
  hsize_t n[1] = {XFER};
  hid_t space = H5Dget_space(dset), mem = H5Screate_simple(1, n, NULL);
  double buf[XFER];
  for (int s = 0; s < segments; ++s)
    for (int t = 0; t < count; ++t) {
      hsize_t start[1] = {(((hsize_t)s * size + rank) * count + t) * XFER};
      for (int i = 0; i < XFER; ++i) buf[i] = rank * 1e6 + t * 1e3 + i;
      H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, n, NULL);
      if (write)
        H5Dwrite(dset, H5T_NATIVE_DOUBLE, mem, space, xfer, buf);
      else
        H5Dread(dset, H5T_NATIVE_DOUBLE, mem, space, xfer, buf);
    }
  H5Sclose(mem);
  H5Sclose(space);
}

static const char* dataset_name(int d) {
  static char name[32];
  if (d == 0) return "coll";
  snprintf(name, sizeof name, "coll%d", d);
  return name;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, segments = argc > 1 ? atoi(argv[1]) : 2, count = argc > 2 ? atoi(argv[2]) : 2;
  int per_segment = argc > 3 && atoi(argv[3]) == 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  hid_t coll = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(coll, H5FD_MPIO_COLLECTIVE);
  hid_t file = H5Fcreate("coll.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  int datasets = per_segment ? segments : 1, in_each = per_segment ? 1 : segments;
  hsize_t dims[1] = {(hsize_t)in_each * size * count * XFER};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_obj_track_times(dcpl, 0); /* no modification times: runs give equal files */
  for (int d = 0; d < datasets; ++d) {
    hid_t dset = H5Dcreate2(file, dataset_name(d), H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    transfers(dset, coll, rank, size, in_each, count, 1);
    H5Dclose(dset);
  }
  H5Fclose(file);
  file = H5Fopen("coll.h5", H5F_ACC_RDONLY, fapl);
  for (int d = 0; d < datasets; ++d) {
    hid_t dset = H5Dopen2(file, dataset_name(d), H5P_DEFAULT);
    transfers(dset, coll, rank, size, in_each, count, 0);
    H5Dclose(dset);
  }
  H5Fclose(file);
  H5Sclose(space);
  H5Pclose(dcpl);
  H5Pclose(coll);
  H5Pclose(fapl);
  MPI_Finalize();
  return 0;
}
