/* IOR's HDF5 pattern on one shared file (built with h5pcc.mpich): every
 * rank writes its block of a contiguous dataset independently in TRANSFERS
 * writes, then the file is closed, HDF5 writing its metadata entries from
 * the call site of the data writes. Usage: hdf5_blocks TRANSFERS. Writes
 * blocks.h5. */
#include <hdf5.h>
#include <mpi.h>
#include <stdlib.h>

enum { XFER = 512 }; /* doubles per write */

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, transfers = argc > 1 ? atoi(argv[1]) : 4;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  hid_t file = H5Fcreate("blocks.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  hsize_t dims[1] = {(hsize_t)size * transfers * XFER}, count[1] = {XFER};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_obj_track_times(dcpl, 0); /* no modification times: runs give equal files */
  hid_t dset = H5Dcreate2(file, "blocks", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  hid_t indep = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(indep, H5FD_MPIO_INDEPENDENT);
  hid_t mem = H5Screate_simple(1, count, NULL);
  double buf[XFER];
  for (int t = 0; t < transfers; ++t) {
    hsize_t start[1] = {((hsize_t)rank * transfers + t) * XFER};
    for (int i = 0; i < XFER; ++i) buf[i] = rank * 1e6 + t * 1e3 + i;
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
    H5Dwrite(dset, H5T_NATIVE_DOUBLE, mem, space, indep, buf);
  }
  H5Sclose(mem);
  H5Pclose(indep);
  H5Pclose(dcpl);
  H5Dclose(dset);
  H5Sclose(space);
  H5Fclose(file);
  H5Pclose(fapl);
  MPI_Finalize();
  return 0;
}
