// Event kinds: one per intercepted function (generated from trace/api/*.list)
// plus the tracer's own records, and what each kind does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace mpior::trace {

enum class Family : uint8_t { posix, stdio, mpi, internal, aio, mmap, mpiio };

// What a call does, independent of which API spelled it. Consumers switch on
// this, never on individual kinds, so a new function in a list needs no code.
// clang-format off
enum class OpClass : uint8_t {
  open, close, read, write, seek, tell, sync, truncate, dup, unlink, rename, mkdir, rmdir,
  stat, access, fopen, fclose,                                             // files
  allocate, copy, link, opendir, readdir, closedir, advise,                // more files
  asubmit, alist, atest, await, acancel, adone,                            // POSIX AIO
  map, unmap, msync, remap,                                                // mappings
  init, finalize, send, isend, recv, irecv, sendrecv, wait, test,          // MPI p2p
  barrier, allcoll, bcast, scatter, reduce, gather, comm_create, comm_free, // MPI collectives
  complete, member,                                                        // tracer records
  mpiio_open, mpiio_close, mpiio_delete, mpiio_read, mpiio_write, mpiio_view, // MPI-IO
  mpiio_seek, mpiio_size, mpiio_sync, mpiio_other, mpiio_block,
  pinit, start, icoll, probe, cancel, request, comm_local,                 // MPI requests, more comms
  process,                                                                   // processes
  topology,                                                                  // MPI topologies
};
// clang-format on

enum class Kind : uint16_t {
#define MPIOR_KIND(name, family, opclass) name,
#include "trace/kinds.inc"
#undef MPIOR_KIND
};

inline constexpr size_t kNumKinds = 0
#define MPIOR_KIND(name, family, opclass) +1
#include "trace/kinds.inc"
#undef MPIOR_KIND
    ;

struct KindInfo {
  std::string_view name;
  Family family;
  OpClass op;
};

// In the header, so that the replayer's per-event tests (is_io, op()...)
// compile to one table load instead of a call each.
inline constexpr KindInfo kKindInfos[kNumKinds] = {
#define MPIOR_KIND(name, family, opclass) {#name, Family::family, OpClass::opclass},
#include "trace/kinds.inc"
#undef MPIOR_KIND
};

inline const KindInfo& info(Kind k) { return kKindInfos[size_t(k)]; }

// What readers need to know of a kind beyond its opclass: stated by the
// fact options of its line in trace/api/*.list (see posix.list), never
// derived from its name.
namespace fact {
inline constexpr uint32_t positional = 1;        // explicit offset: the fd's position stays (pread, pwrite)
inline constexpr uint32_t by_fd = 2;             // names its file by an fd (fstat, fdopen, fdopendir)
inline constexpr uint32_t by_path = 4;           // names its file by a path (truncate)
inline constexpr uint32_t nofollow = 8;          // does not follow a symbolic link (lstat)
inline constexpr uint32_t datasync = 16;         // syncs data, not metadata (fdatasync)
inline constexpr uint32_t prefix = 32;           // meets only the lower ranks (MPI_Scan, MPI_Exscan)
inline constexpr uint32_t neighbor = 64;         // meets only topology neighbours (MPI_Neighbor_*)
inline constexpr uint32_t text = 128;            // its byte count follows the text printed or read (fprintf, fgets)
inline constexpr uint32_t whole_fs = 256;        // syncs the whole file system its fd is on (syncfs)
inline constexpr uint32_t ranged = 512;          // works on the byte range in its offset and count (sync_file_range)
inline constexpr uint32_t two_files = 1024;      // names a second file, file2 (rename, link, copy_file_range)
inline constexpr uint32_t readahead = 2048;      // reads its range into the page cache (readahead among the advices)
inline constexpr uint32_t returns_errno = 4096;  // returns the errno itself (posix_fadvise, posix_fallocate)
inline constexpr uint32_t symbolic = 8192;       // makes a symbolic link (symlink among the links)
// A collective ROMIO completes on every rank together: it synchronises
// inside through PMPI (MPI_File_set_size, set_view, sync, close, set_atomicity).
inline constexpr uint32_t synchronises = 16384;
// Makes the file at least that size, never smaller (MPI_File_preallocate).
inline constexpr uint32_t grows_only = 32768;
// Its file slot indexes the rank's file table, file2 too with two_files
// (every kind of the file families: trace::file_slots).
inline constexpr uint32_t names_file = 65536;
}  // namespace fact

inline constexpr uint32_t kKindFacts[kNumKinds] = {
#include "trace/kind_facts.inc"
};

inline constexpr bool has_fact(Kind k, uint32_t f) { return (kKindFacts[size_t(k)] & f) != 0; }
std::optional<Kind> kind_from_name(std::string_view name);
inline std::string_view name(Kind k) { return kKindInfos[size_t(k)].name; }
std::string_view name(OpClass op);

// File-system work the replayer reissues (posix and stdio families).
inline bool is_io(Kind k) {
  Family f = info(k).family;
  return f == Family::posix || f == Family::stdio || f == Family::aio || f == Family::mmap;
}
inline bool is_mpi(Kind k) { return info(k).family == Family::mpi; }
// MPI_File_* calls and the view blocks recorded under MPI_File_set_view.
inline bool is_mpiio(Kind k) { return info(k).family == Family::mpiio || info(k).op == OpClass::mpiio_block; }
// The last operation class (for tables indexed by it).
inline constexpr OpClass kLastOpClass = OpClass::topology;

// How the members of a collective meet (thesis §2.1): every member waits for
// every other (barrier, allcoll), the root's data goes out (bcast, scatter) or
// comes in (reduce, gather); communicators are made and freed collectively
// too, moving no data. The one table of the collective op classes.
enum class Meet : uint8_t { none, all_to_all, one_to_all, all_to_one, comm };
inline constexpr Meet meet_of(OpClass op) {
  switch (op) {
    case OpClass::barrier:
    case OpClass::allcoll:
      return Meet::all_to_all;
    case OpClass::bcast:
    case OpClass::scatter:
      return Meet::one_to_all;
    case OpClass::reduce:
    case OpClass::gather:
      return Meet::all_to_one;
    case OpClass::comm_create:
    case OpClass::comm_free:
      return Meet::comm;
    default:
      return Meet::none;
  }
}
inline constexpr bool is_all_to_all(OpClass op) { return meet_of(op) == Meet::all_to_all; }
// Rooted collectives: one-to-all (bcast, scatter) and all-to-one (reduce, gather).
inline constexpr bool is_one_to_all(OpClass op) { return meet_of(op) == Meet::one_to_all; }
inline constexpr bool is_all_to_one(OpClass op) { return meet_of(op) == Meet::all_to_one; }
inline constexpr bool is_rooted(OpClass op) { return is_one_to_all(op) || is_all_to_one(op); }
// The six that move data among (or synchronise) all members.
inline constexpr bool is_meeting(OpClass op) { return meet_of(op) != Meet::none && meet_of(op) != Meet::comm; }
inline constexpr bool is_collective(OpClass op) { return meet_of(op) != Meet::none; }

}  // namespace mpior::trace
