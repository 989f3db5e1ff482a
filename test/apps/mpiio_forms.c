/* MPI-IO in most of its forms, counting every MPI_File_* call it makes.
 * views.dat: a vector view and a subarray view, collective and independent,
 * explicit offsets, individual pointers, nonblocking, split collective, the
 * large-count _c forms; shared.dat: shared-pointer and ordered writes and
 * reads; seq.dat: a MPI_MODE_SEQUENTIAL file, ordered writes before and
 * after a view at MPI_DISPLACEMENT_CURRENT; zero.dat: a collective write
 * only rank 0 moves data in; gone.dat: made by rank 0 alone, then deleted
 * ("shared" as the argument: shared.dat and gone.dat only). Prints, on rank 0,
 * "count NAME N" for every function with the total over all ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 64
static const char* names[MAXN];
static int counts[MAXN];
static int nnames;

static void counted(const char* name) {
  for (int i = 0; i < nnames; ++i)
    if (strcmp(names[i], name) == 0) {
      ++counts[i];
      return;
    }
  names[nnames] = name;
  counts[nnames++] = 1;
}
#define F(fn, ...) (counted(#fn), fn(__VA_ARGS__))

enum { B = 4 }; /* ints per block */

static void views(int rank, int size) {
  MPI_File fh;
  int buf[4 * B * 4], back[4 * B * 4];
  for (int i = 0; i < 4 * B * 4; ++i) buf[i] = rank * 1000 + i;
  F(MPI_File_open, MPI_COMM_WORLD, "views.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  /* vector: 4 blocks of B ints, one per rank in turn */
  MPI_Datatype vec, sub;
  MPI_Type_vector(4, B, B * size, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  F(MPI_File_set_view, fh, (MPI_Offset)rank * B * sizeof(int), MPI_INT, vec, "native", MPI_INFO_NULL);
  F(MPI_File_write_all, fh, buf, 4 * B, MPI_INT, MPI_STATUS_IGNORE);
  F(MPI_File_write_at, fh, 4 * B, buf, B, MPI_INT, MPI_STATUS_IGNORE);
  F(MPI_File_seek, fh, 5 * B, MPI_SEEK_SET);
  F(MPI_File_write, fh, buf, B, MPI_INT, MPI_STATUS_IGNORE);
  MPI_Offset pos, byte;
  F(MPI_File_get_position, fh, &pos);
  F(MPI_File_get_byte_offset, fh, pos, &byte);
  MPI_Request rq[2];
  F(MPI_File_iwrite_at, fh, 6 * B, buf, B, MPI_INT, &rq[0]);
  F(MPI_File_iread_at, fh, 0, back, B, MPI_INT, &rq[1]);
  MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
  F(MPI_File_iwrite_all, fh, buf, 2 * B, MPI_INT, &rq[0]);
  MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
  F(MPI_File_write_at_all_begin, fh, 8 * B, buf, 4 * B, MPI_INT);
  F(MPI_File_write_at_all_end, fh, buf, MPI_STATUS_IGNORE);
#if MPI_VERSION >= 4 /* the large-count forms (not in Open MPI 4.1) */
  F(MPI_File_write_at_c, fh, (MPI_Offset)12 * B, buf, (MPI_Count)B, MPI_INT, MPI_STATUS_IGNORE);
  F(MPI_File_write_at_all_c, fh, (MPI_Offset)13 * B, buf, (MPI_Count)B, MPI_INT, MPI_STATUS_IGNORE);
  F(MPI_File_read_at_c, fh, 0, back, (MPI_Count)B, MPI_INT, MPI_STATUS_IGNORE);
#endif
  F(MPI_File_sync, fh);
  /* subarray: a 4 x (4*size) global array of ints, each rank a 4x4 column block */
  int sizes[2] = {4, 4 * size}, subs[2] = {4, 4}, starts[2] = {0, 4 * rank};
  MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub);
  MPI_Type_commit(&sub);
  MPI_Offset base = (MPI_Offset)16 * B * size * sizeof(int);
  F(MPI_File_set_view, fh, base, MPI_INT, sub, "native", MPI_INFO_NULL);
  F(MPI_File_write_at_all, fh, 0, buf, 16, MPI_INT, MPI_STATUS_IGNORE);
  F(MPI_File_read_at_all, fh, 0, back, 16, MPI_INT, MPI_STATUS_IGNORE);
  F(MPI_File_read_all_begin, fh, back, 16, MPI_INT);
  F(MPI_File_read_all_end, fh, back, MPI_STATUS_IGNORE);
  F(MPI_File_iread_all, fh, back, 16, MPI_INT, &rq[0]);
  MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
  F(MPI_File_set_view, fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
  MPI_Offset fsize;
  F(MPI_File_get_size, fh, &fsize);
  F(MPI_File_preallocate, fh, fsize + 64);
  F(MPI_File_read_at, fh, 0, back, (int)sizeof back, MPI_BYTE, MPI_STATUS_IGNORE);
  int amode, flag;
  MPI_Info info;
  MPI_Group group;
  F(MPI_File_get_amode, fh, &amode);
  F(MPI_File_get_atomicity, fh, &flag);
  F(MPI_File_set_atomicity, fh, 0);
  F(MPI_File_get_info, fh, &info);
  MPI_Info_free(&info);
  F(MPI_File_get_group, fh, &group);
  MPI_Group_free(&group);
  MPI_Fint f = F(MPI_File_c2f, fh);
  if (F(MPI_File_f2c, f) != fh) printf("f2c mismatch\n");
  F(MPI_File_close, &fh);
  MPI_Type_free(&vec);
  MPI_Type_free(&sub);
}

static void shared(int rank) {
  MPI_File fh;
  char line[32], back[32];
  snprintf(line, sizeof line, "rank %03d shared line\n", rank);
  int n = (int)strlen(line);
  F(MPI_File_open, MPI_COMM_WORLD, "shared.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int r = 0; r < size; ++r) { /* in rank order: the file's content does not depend on timing */
    if (r == rank) F(MPI_File_write_shared, fh, line, n, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  F(MPI_File_write_ordered, fh, line, n, MPI_CHAR, MPI_STATUS_IGNORE);
  F(MPI_File_write_ordered_begin, fh, line, n, MPI_CHAR);
  F(MPI_File_write_ordered_end, fh, line, MPI_STATUS_IGNORE);
  MPI_Offset spos;
  F(MPI_File_get_position_shared, fh, &spos);
  F(MPI_File_seek_shared, fh, 0, MPI_SEEK_SET);
  F(MPI_File_read_ordered, fh, back, n, MPI_CHAR, MPI_STATUS_IGNORE);
  F(MPI_File_read_shared, fh, back, n, MPI_CHAR, MPI_STATUS_IGNORE);
  F(MPI_File_close, &fh);
}

static void sequential(int rank) {
  MPI_File fh;
  int v[B];
  for (int i = 0; i < B; ++i) v[i] = rank * B + i;
  F(MPI_File_open, MPI_COMM_WORLD, "seq.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL,
    &fh);
  F(MPI_File_write_ordered, fh, v, B, MPI_INT, MPI_STATUS_IGNORE);
  F(MPI_File_set_view, fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
  F(MPI_File_write_ordered, fh, v, B, MPI_INT, MPI_STATUS_IGNORE);
  F(MPI_File_close, &fh);
  F(MPI_File_open, MPI_COMM_WORLD, "zero.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  F(MPI_File_write_at_all, fh, 0, v, rank == 0 ? B : 0, MPI_INT, MPI_STATUS_IGNORE);
  F(MPI_File_close, &fh);
}

static void gone(int rank) {
  if (rank != 0) return;
  MPI_File fh;
  char text[] = "short-lived\n";
  F(MPI_File_open, MPI_COMM_SELF, "gone.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  F(MPI_File_write, fh, text, (int)strlen(text), MPI_CHAR, MPI_STATUS_IGNORE);
  F(MPI_File_close, &fh);
  F(MPI_File_delete, "gone.dat", MPI_INFO_NULL);
}

/* Every rank's table, summed on rank 0 by name. */
static void report(int rank, int size) {
  char mine[4096] = "";
  for (int i = 0; i < nnames; ++i) {
    size_t len = strlen(mine);
    snprintf(mine + len, sizeof mine - len, "%s %d\n", names[i], counts[i]);
  }
  char* all = rank == 0 ? malloc((size_t)size * sizeof mine) : NULL;
  MPI_Gather(mine, sizeof mine, MPI_CHAR, all, sizeof mine, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank != 0) return;
  nnames = 0;
  for (int r = 0; r < size; ++r) {
    char* save = NULL;
    for (char* tok = strtok_r(all + (size_t)r * sizeof mine, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save)) {
      char name[64];
      int c;
      if (sscanf(tok, "%63s %d", name, &c) != 2) continue;
      int i = 0;
      while (i < nnames && strcmp(names[i], name) != 0) ++i;
      if (i == nnames) {
        names[nnames] = strdup(name);
        counts[nnames++] = 0;
      }
      counts[i] += c;
    }
  }
  for (int i = 0; i < nnames; ++i) printf("count %s %d\n", names[i], counts[i]);
  free(all);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* "shared": only the shared-pointer part (Open MPI 4.1.4's OMPIO hangs or
   * crashes now and then in the views part's nonblocking collectives). */
  if (argc < 2 || strcmp(argv[1], "shared") != 0) views(rank, size);
  shared(rank);
  if (argc < 2 || strcmp(argv[1], "shared") != 0) sequential(rank);
  gone(rank);
  report(rank, size);
  MPI_Finalize();
  return 0;
}
