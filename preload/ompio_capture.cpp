// Open MPI's shared file pointer, as OMPIO itself took it (the counterpart of
// ROMIO's, shfp_capture.hpp). OMPIO's sharedfp components (sm on one node,
// lockedfile across nodes) take a `_shared` call's offset from the pointer
// under their lock (a semaphore in shared memory, an fcntl lock), or for an
// `_ordered` call gather the counts, take the total at rank 0 and scatter
// each rank's start; then each calls mca_common_ompio_file_{i,}{write,read}_at
// {_all,} with that offset, in etypes. Those are calls between two of Open
// MPI's libraries (mca_sharedfp_*.so into libmca_common_ompio.so), bound at
// run time through the global scope, where the preloaded tracer comes first:
// the definitions below see the offset on the way through and pass every
// argument on unchanged. They only look while a `_shared`/`_ordered` call is
// armed on this thread; the first offset is the call's. Only the Open MPI
// tracer exports them (preload/meson.build).
#include <mpi.h>

#if defined(OPEN_MPI)
#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstring>

#include "preload/mpi_library.hpp"
#include "preload/shfp_capture.hpp"
#include "preload/wrapper_support.hpp"

namespace mpior::preload {
namespace {

struct Lookup {
  const char* symbol;
  void* found;
};

// Open MPI loads its components (and with them libmca_common_ompio) with
// dlopen; where RTLD_NEXT does not reach them, ask each loaded object.
int lookup_in_object(dl_phdr_info* info, size_t, void* data) {
  auto* l = static_cast<Lookup*>(data);
  if (!info->dlpi_name || !strstr(info->dlpi_name, "ompio")) return 0;
  void* h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  if (!h) return 0;
  l->found = dlsym(h, l->symbol);
  dlclose(h);
  return l->found != nullptr;
}

void* next_definition(const char* symbol) noexcept {
  Lookup l{symbol, dlsym(RTLD_NEXT, symbol)};
  if (!l.found) dl_iterate_phdr(lookup_in_object, &l);
  return l.found;
}

template <typename Fn>
Fn real_of(std::atomic<Fn>& slot, const char* symbol) noexcept {
  Fn f = slot.load(std::memory_order_acquire);
  if (!f) {
    f = reinterpret_cast<Fn>(next_definition(symbol));
    slot.store(f, std::memory_order_release);
  }
  return f;
}

inline void observe(MPI_Offset offset) noexcept {
  if (__builtin_expect(t_shfp.armed, 0) && !t_shfp.got) {
    t_shfp.value = offset;
    t_shfp.got = 1;
  }
}

}  // namespace
}  // namespace mpior::preload

// The ompio_file_t, datatype and status (or request) pointers are opaque here.
// OMPI_ERROR (-1) only if the library calling us could not be found again,
// which cannot happen while it is loaded.
#define MPIOR_OMPIO_HOOK(NAME, BUF)                                                                            \
  extern "C" MPIOR_API int NAME(void* fh, MPI_Offset offset, BUF buf, int count, void* datatype, void* last) { \
    using Fn = int (*)(void*, MPI_Offset, BUF, int, void*, void*);                                             \
    static std::atomic<Fn> real{nullptr};                                                                      \
    ::mpior::preload::observe(offset);                                                                         \
    Fn f = ::mpior::preload::real_of(real, #NAME);                                                             \
    return f ? f(fh, offset, buf, count, datatype, last) : -1;                                                 \
  }

MPIOR_OMPIO_HOOK(mca_common_ompio_file_write_at, const void*)
MPIOR_OMPIO_HOOK(mca_common_ompio_file_write_at_all, const void*)
MPIOR_OMPIO_HOOK(mca_common_ompio_file_iwrite_at, const void*)
MPIOR_OMPIO_HOOK(mca_common_ompio_file_iwrite_at_all, const void*)
MPIOR_OMPIO_HOOK(mca_common_ompio_file_read_at, void*)
MPIOR_OMPIO_HOOK(mca_common_ompio_file_read_at_all, void*)
MPIOR_OMPIO_HOOK(mca_common_ompio_file_iread_at, void*)
MPIOR_OMPIO_HOOK(mca_common_ompio_file_iread_at_all, void*)
#undef MPIOR_OMPIO_HOOK

// OMPIO's open, seen on the way through: the job's files go through OMPIO
// (mpi_library.hpp). The communicator, info and file pointers are opaque here.
extern "C" MPIOR_API int mca_common_ompio_file_open(void* comm, const char* filename, int amode, void* info, void* fh,
                                                    bool use_sharedfp) {
  using Fn = int (*)(void*, const char*, int, void*, void*, bool);
  static std::atomic<Fn> real{nullptr};
  ::mpior::preload::mpi::note_ompio_open();
  Fn f = ::mpior::preload::real_of(real, "mca_common_ompio_file_open");
  return f ? f(comm, filename, amode, info, fh, use_sharedfp) : -1;
}

#endif  // OPEN_MPI
