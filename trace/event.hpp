// One traced call: the fixed-size record the tracer fills on the hot path
// (RawEvent) and the expanded form every consumer reads back (Event).
#pragma once

#include <array>
#include <cstdint>

#include "trace/kind.hpp"

namespace mpior::trace {

inline constexpr int kNumArgs = 8;

// What each argument slot holds. File calls and MPI calls share the slots;
// the kind's family says which set of names applies.
namespace arg {
// files (posix, stdio)
inline constexpr int handle = 0;   // fd, or stream id for stdio; -1 none
inline constexpr int file = 1;     // index in the rank's file table (plans too: see PlanRank); -1 none
inline constexpr int offset = 2;   // byte offset the call started at; -1 unknown
inline constexpr int count = 3;    // bytes requested; -1 unknown
inline constexpr int flags = 4;    // open flags, whence, fcntl command, dup3 flags
inline constexpr int mode = 5;     // creation or access mode, fcntl argument
inline constexpr int file2 = 6;    // rename: target path's file index
inline constexpr int handle2 = 7;  // dup*/fcntl: the new handle
// MPI
inline constexpr int comm = 0;      // rank-local communicator id (plans too: see PlanRank)
inline constexpr int peer = 1;      // destination or source as given, in comm ranks
inline constexpr int tag = 2;       // tag as given
inline constexpr int bytes = 3;     // bytes this rank sends or contributes
inline constexpr int root = 4;      // rooted collectives
inline constexpr int request = 5;   // request id (nonblocking calls, completion records)
inline constexpr int src = 6;       // completed receive: actual source (from the status)
inline constexpr int stag = 7;      // completed receive: actual tag (from the status)
inline constexpr int peer2 = 4;     // MPI_Sendrecv: source as given
inline constexpr int tag2 = 5;      // MPI_Sendrecv: receive tag as given
inline constexpr int newcomm = 5;   // communicator creation: the new local id, -1 for MPI_COMM_NULL
inline constexpr int coll_seq = 5;  // collectives and comm_free: collectives this rank made on comm before
inline constexpr int req_kind = 4;  // completion record: 1 send, 2 receive, 0 unknown request
// icoll (nonblocking collective posted), pinit/start of a persistent
// collective: the collective count on comm (slot 5 holds the request id).
inline constexpr int icoll_seq = 6;
// comm_create: collectives this rank made on the parent before (as the new
// communicator's CommEntry::parent_seq, there too when no communicator was made).
inline constexpr int create_seq = 6;
// MPI_Isendrecv (flag::recv_too): the receive half's tag (its source: peer2).
inline constexpr int isr_tag = 6;
}  // namespace arg

// MPI-IO (family mpiio): MPI_File_* calls. File slots keep their places
// (handle, file, offset, count) so files resolve as for POSIX calls.
namespace arg {
inline constexpr int fcomm = 5;    // the file's communicator (rank-local id)
inline constexpr int fextra = 6;   // open: amode; set_view: etype size; nonblocking: request id
inline constexpr int fextent = 7;  // set_view: filetype extent; seek: whence; open: open(2) flags of amode
}  // namespace arg
// MPI-IO access bits in arg::flags of read, write, seek and the other calls.
namespace fio {
inline constexpr int64_t kColl = 1;           // collective (_all, _ordered, open, close, set_view, set_size, sync)
inline constexpr int64_t kNonblocking = 2;    // i...: completed by a Wait/Test (request in arg::fextra)
inline constexpr int64_t kAt = 4;             // explicit offset (_at)
inline constexpr int64_t kShared = 8;         // shared file pointer (_shared, seek_shared)
inline constexpr int64_t kOrdered = 16;       // _ordered (shared pointer, in rank order)
inline constexpr int64_t kBegin = 32;         // split collective _begin (the data moves here)
inline constexpr int64_t kEnd = 64;           // split collective _end
inline constexpr int64_t kUnflattened = 128;  // set_view: filetype not flattened (no mpior_block records)
// set_view given MPI_DISPLACEMENT_CURRENT (a MPI_MODE_SEQUENTIAL file): the
// record's displacement is the one it resolved to (MPI_File_get_view).
inline constexpr int64_t kDisplacementCurrent = 256;
}  // namespace fio
// POSIX AIO (aio family): submits carry handle, file, offset, count like a
// pread/pwrite; completion records (mpior_aio_done) also carry bytes done in ret.
namespace arg {
inline constexpr int lio_op = 4;        // kAioRead, kAioWrite, kAioNop, kAioSync
inline constexpr int list_mode = 4;     // lio_listio: LIO_WAIT or LIO_NOWAIT
inline constexpr int cancel_one = 4;    // aio_cancel, io_cancel: 1 one request, 0 every request on the fd
inline constexpr int submit_depth = 5;  // mpior_aio_done: depth of the call that submitted it
inline constexpr int submit_kind = 6;   // mpior_aio_done: the submitting call's Kind (0, open: traces before it)
inline constexpr int aio_req = 7;       // request id (per rank, from 1)
inline constexpr int map_id = 7;        // mmap family: mapping id (per rank, from 1)
inline constexpr int map_prot = 4;      // mmap: PROT_* ; msync: MS_* flags
inline constexpr int map_flags = 5;     // mmap: MAP_* flags
inline constexpr int map_len = 6;       // mmap family: length of the mapping or range (count: bytes counted)
inline constexpr int offset2 = 5;       // copy calls: offset at the out end, -1 its file position
}  // namespace arg
// Copy calls' flags slot: which ends had an explicit offset (the others used
// and moved their fd's position).
inline constexpr int64_t kCopyInPositional = 1;
inline constexpr int64_t kCopyOutPositional = 2;

// link kinds' flags slot for a symbolic link (file: its target; file2: the link).
inline constexpr int64_t kSymlink = -1;
// allocate kinds' mode slot for posix_fallocate (which returns an errno).
inline constexpr int64_t kPosixAllocate = -1;
// advise kinds' flags slot (else a POSIX_FADV_* advice) for readahead.
inline constexpr int64_t kReadahead = -1;

// Operation codes of an AIO request (glibc's LIO_* values plus fsync).
inline constexpr int64_t kAioRead = 0;
inline constexpr int64_t kAioWrite = 1;
inline constexpr int64_t kAioNop = 2;
inline constexpr int64_t kAioSync = 3;

// Handles (fds, stdio stream ids) name open files; their values are names,
// not quantities: plans that number them differently but consistently are the
// same run (mpior-post --compare), and extrapolation copies them. MPI-IO
// file handle ids (arg::handle of the mpiio family and mpior_block) are names too.
inline bool is_handle_slot(Kind k, int slot) {
  if (is_mpiio(k)) return slot == arg::handle;
  return is_io(k) && !is_mpi(k) && (slot == arg::handle || slot == arg::handle2);
}
inline bool returns_handle(Kind k) {
  OpClass op = info(k).op;
  return is_io(k) && !is_mpi(k) && (op == OpClass::open || op == OpClass::dup);
}

// Request kinds in a completion record's req_kind slot.
inline constexpr int64_t kReqSend = 1;
inline constexpr int64_t kReqRecv = 2;
inline constexpr int64_t kReqFile = 3;  // MPI_File_i*: completion of nonblocking file I/O
// A nonblocking or persistent collective: the completion's peer slot holds the
// root (-1 none), its tag slot the collective's OpClass (barrier, allcoll,
// bcast, ...): the replay meets the other members there.
inline constexpr int64_t kReqColl = 4;
inline constexpr int64_t kReqGen = 5;   // a generalized request (MPI_Grequest_start)
inline constexpr int64_t kReqComm = 6;  // MPI_Comm_idup

// MPI wildcards and null peers, normalized so traces do not depend on one
// MPI implementation's constants.
inline constexpr int64_t kAnySource = -1;
inline constexpr int64_t kProcNull = -2;
inline constexpr int64_t kAnyTag = -1;
inline constexpr int64_t kUnknown = -1;

namespace flag {
// A send the receiver logged for its sender (thesis §2.1.5), nested under the
// call that completed the receive. Slots: comm, peer (the sender, a rank in
// comm), tag and bytes as for a send; sender_thread, sender_position (events
// the sender's thread had recorded before it), sender_start (ns, sender's
// trace time). mpior-post moves it into the sender's stream.
inline constexpr uint8_t on_behalf = 1;
// A completion record of a request that was cancelled (MPI_Test_cancelled):
// no message moved.
inline constexpr uint8_t cancelled = 2;
// A neighbourhood collective (MPI_Neighbor_*, MPI_Ineighbor_*, their _init
// and _c forms; opclass allcoll, or kReqColl requests): its members exchange
// with their topology neighbours only (mpior_neighbor records).
inline constexpr uint8_t neighbor = 4;
// MPI_Isendrecv(_replace): an isend whose request completes as a receive
// from peer2 with tag isr_tag (the completion record is the receive's).
inline constexpr uint8_t recv_too = 8;
}  // namespace flag

namespace arg {
inline constexpr int sender_thread = 4;
inline constexpr int sender_position = 5;
inline constexpr int sender_start = 6;
inline constexpr int member = 1;  // mpior_member: the member's rank in the collective's communicator
// Reduce/Gather, the root's record: 0 when every member's call was kept; n > 0
// when only the n - 1 members named by the mpior_member records under it were.
inline constexpr int contributors = 1;
// mpior_neighbor: comm (the topology communicator's local id), peer (the
// neighbour's rank in it, kProcNull for a cartesian edge), and which way.
inline constexpr int direction = 2;
// Rooted collectives on an intercommunicator (root: the root's position in
// the members list, kProcNull for the root's group's other members): where
// the caller's remote group starts in the members list, and its size (> 0
// marks the record as an intercommunicator's).
inline constexpr int remote_begin = 6;
inline constexpr int remote_size = 7;
}  // namespace arg
inline constexpr int64_t kNeighborIn = 0;   // a source: its messages are received
inline constexpr int64_t kNeighborOut = 1;  // a destination: messages are sent to it

// Hot-path record, filled by a wrapper and handed to the thread's builder.
// Times are in the tracer's clock units until the builder converts them.
struct RawEvent {
  Kind kind{};
  uint8_t depth = 0;
  uint8_t flags = 0;
  int32_t err = 0;
  int64_t start = 0;
  int64_t end = 0;
  uint64_t callsite = 0;
  int64_t ret = 0;
  std::array<int64_t, kNumArgs> args{};
  int64_t tracer = 0;  // depth 0: the tracer's own time since the previous depth-0 call returned (left out of the gap)
};

// One occurrence of an event, as a consumer sees it after expansion.
struct Event {
  Kind kind{};
  uint8_t depth = 0;
  uint8_t flags = 0;
  uint32_t thread = 0;
  int32_t rank = 0;
  uint32_t leaf = 0;  // the trace position (leaf index in its stream) it came from
  uint64_t callsite = 0;
  int64_t gap_ns = 0;  // time since the previous event at this depth (or the parent's start)
  int64_t dur_ns = 0;
  int64_t start_ns = 0;  // relative to the process's trace start
  int64_t end_ns = 0;
  int64_t ret = 0;
  int32_t err = 0;
  std::array<int64_t, kNumArgs> args{};

  OpClass op() const { return info(kind).op; }

  // The record it expands from, to feed a StreamBuilder again (a stream
  // rebuilt with events inserted or arguments renumbered).
  RawEvent raw() const {
    RawEvent r;
    r.kind = kind;
    r.depth = depth;
    r.flags = flags;
    r.err = err;
    r.start = start_ns;
    r.end = end_ns;
    r.callsite = callsite;
    r.ret = ret;
    r.args = args;
    return r;
  }
};

}  // namespace mpior::trace
