/* Shared by mpi_families.c and mpi_families_comm.c. */
#ifndef MPIOR_TEST_MPI_FAMILIES_H
#define MPIOR_TEST_MPI_FAMILIES_H

#include <mpi.h>

extern int rank, size;
long sum_all(MPI_Comm comm, long v);

long idup(void);
long comm_cycle(void);
long intercomm(void);
long attr(void);

#endif
