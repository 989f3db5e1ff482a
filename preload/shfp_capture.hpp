// ROMIO's shared file pointer, as ROMIO itself read it. A `_shared` or
// `_ordered` call takes its offset with ADIO_Get_shared_fp: lock the hidden
// `.<name>.shfp.<n>` file, pread its 8 bytes at 0 (the pointer, in etypes),
// pwrite pointer + this call's etypes, unlock. Reading the pointer before or
// after the call races with other ranks; the value ROMIO read under its lock
// is exact. The MPI-IO handler arms the capture on its thread for the call;
// the POSIX read handler, seeing that first 8-byte read at 0 of a .shfp. file,
// reads the same 8 bytes again while ROMIO still holds the lock.
#pragma once

#include <cstdint>

namespace mpior::preload {

struct ShfpCapture {
  uint8_t armed;  // inside a _shared/_ordered MPI-IO call on this thread
  uint8_t got;    // value holds the pointer ROMIO read
  int64_t value;
};

constinit inline thread_local ShfpCapture t_shfp __attribute__((tls_model("initial-exec"))) = {0, 0, 0};

// The POSIX read handler's hook (posix_handlers.cpp): fd read count bytes at offset.
void shfp_observe(int fd, int32_t file, int64_t count, int64_t offset, int64_t ret) noexcept;

}  // namespace mpior::preload
