// Recording hooks for MPI-IO (trace/api/mpiio.list). Like the MPI handlers
// they get the real call as a callable. Every record names the rank's handle
// id of the file (from 1), the file (the same file table as POSIX calls), the
// file's communicator and, for reads and writes, the byte offset in the file
// where the access starts once the view is applied, and the bytes (count x
// type size). A view is recorded once, at MPI_File_set_view, with its
// flattened filetype as mpior_block records under it. ROMIO makes its own
// communication through PMPI, so nothing under an MPI-IO call is pruned; the
// POSIX calls it makes are recorded one level deeper by their own wrappers.
#pragma once

#include <cstdint>
#include <vector>

#include "preload/call.hpp"
#include "preload/mpi_abi.hpp"
#include "preload/mpi_handlers.hpp"
#include "trace/event.hpp"

namespace mpior::preload::mpi {

namespace expr {
using namespace trace::fio;
}  // namespace expr

// What the tracer knows of an open MPI_File.
struct FileHandle {
  int64_t id = -1;          // per rank, from 1; -1: a handle the tracer did not see opened
  int32_t file = -1;        // file table index
  int32_t comm = -1;        // local communicator id
  bool excluded = false;    // opened on an excluded path: none of its calls is recorded
  bool sequential = false;  // MPI_MODE_SEQUENTIAL
};

FileHandle file_handle(MPI_File fh) noexcept;

// Contiguous pieces of a datatype's typemap, in order, adjacent ones merged.
struct Block {
  int64_t offset = 0;
  int64_t length = 0;
};
// False when the type cannot be flattened (darray, more than max_blocks pieces).
bool flatten_type(MPI_Datatype t, std::vector<Block>& out, size_t max_blocks) noexcept;

// Handler bodies (mpiio_handlers.cpp); they run after the real call.
void file_opened(Call& c, int rc, MPI_Comm comm, const char* name, int amode, MPI_File fh) noexcept;
void file_closed(Call& c, int rc, MPI_File fh) noexcept;
void file_deleted(Call& c, int rc, const char* name) noexcept;
void view_set(Call& c, int rc, MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype) noexcept;
// Before a read or write: the byte offset it starts at (-1 unknown).
int64_t io_offset(MPI_File fh, int64_t flags, int64_t offset) noexcept;
void io_done(Call& c, int rc, MPI_File fh, int64_t flags, int64_t at, int64_t bytes, MPI_Request* request) noexcept;
// After a call that may change fh's hints (preload/mpiio_hint_capture.hpp); not for
// a dropped call (an excluded file).
void hints_changed(Call& c, MPI_File fh, MPI_Info given) noexcept;
// Fills the handle slots; false (and the call dropped) on an excluded file.
bool fill_file(Call& c, int64_t rc, MPI_File fh, int64_t flags) noexcept;

template <typename Invoke>
int file_open(Call& c, Invoke&& invoke, MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh) {
  int rc = invoke();
  c.stop();
  file_opened(c, rc, comm, filename, amode, rc == MPI_SUCCESS ? *fh : MPI_FILE_NULL);
  if (rc == MPI_SUCCESS) hints_changed(c, *fh, info);
  return rc;
}

template <typename Invoke>
int file_close(Call& c, Invoke&& invoke, MPI_File* fh) {
  MPI_File before = fh ? *fh : MPI_FILE_NULL;
  int rc = invoke();
  c.stop();
  file_closed(c, rc, before);
  return rc;
}

template <typename Invoke>
int file_delete(Call& c, Invoke&& invoke, const char* filename) {
  int rc = invoke();
  c.stop();
  file_deleted(c, rc, filename);
  return rc;
}

template <typename Invoke>
int file_view(Call& c, Invoke&& invoke, MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
              MPI_Info info) {
  int rc = invoke();
  c.stop();
  view_set(c, rc, fh, disp, etype, filetype);
  if (rc == MPI_SUCCESS && info != MPI_INFO_NULL) hints_changed(c, fh, info);
  return rc;
}

template <typename Invoke>
int file_io(Call& c, Invoke&& invoke, MPI_File fh, int64_t flags, int64_t offset, int64_t bytes, MPI_Request* request) {
  int64_t at = io_offset(fh, flags, offset);
  c.restart();  // the position and byte-offset queries are the tracer's
  int rc = invoke();
  c.stop();
  io_done(c, rc, fh, flags, at, bytes, request);
  return rc;
}

template <typename Invoke>
int file_seek(Call& c, Invoke&& invoke, MPI_File fh, int64_t flags, MPI_Offset offset, int whence) {
  int rc = invoke();
  c.stop();
  fill_file(c, rc, fh, flags);
  c.ev().args[trace::arg::offset] = offset;
  c.ev().args[trace::arg::fextent] = whence;
  return rc;
}

template <typename Invoke>
int file_size(Call& c, Invoke&& invoke, MPI_File fh, int64_t flags, MPI_Offset size) {
  int rc = invoke();
  c.stop();
  fill_file(c, rc, fh, flags);
  c.ev().args[trace::arg::offset] = size;
  return rc;
}

// Queries and settings: the handle, the file and whether it was collective.
template <typename Invoke>
auto file_other(Call& c, Invoke&& invoke, MPI_File fh, int64_t flags) {
  auto rc = invoke();
  c.stop();
  fill_file(c, 0, fh, flags);
  if constexpr (std::is_same_v<decltype(rc), int>) c.ev().ret = rc;
  return rc;
}

template <typename Invoke>
int file_set_info(Call& c, Invoke&& invoke, MPI_File fh, MPI_Info info) {
  int rc = file_other(c, invoke, fh, expr::kColl);
  if (rc == MPI_SUCCESS && info != MPI_INFO_NULL) hints_changed(c, fh, info);
  return rc;
}

// Calls without a file handle (MPI_File_f2c, MPI_File_create_errhandler).
template <typename Invoke>
auto file_nohandle(Call& c, Invoke&& invoke) {
  auto rc = invoke();
  c.stop();
  c.ev().args[trace::arg::handle] = -1;
  c.ev().args[trace::arg::file] = -1;
  c.ev().args[trace::arg::fcomm] = -1;
  if constexpr (std::is_same_v<decltype(rc), int>) c.ev().ret = rc;
  return rc;
}

}  // namespace mpior::preload::mpi
