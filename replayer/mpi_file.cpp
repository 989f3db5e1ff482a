// --mpi: MPI-IO issued through MPI_File_* on the target, so the target's MPI
// (ROMIO's collective buffering, data sieving) decides the POSIX calls. Views
// are rebuilt from their flattened blocks (etype MPI_BYTE, an hindexed
// filetype resized to the traced extent); an access at byte B of the file is
// issued at its data offset in that view. With one process per rank every
// collective form is the collective itself; with blocks of ranks per process
// each rank opens the file alone and collective forms become independent.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>

#include "replayer/io_replay.hpp"
#include "replayer/mpi_ops.hpp"
#include "replayer/mpiio_replay.hpp"
#include "replayer/replay_report.hpp"
#include "replayer/setup.hpp"
#include "trace/arg_views.hpp"
#include "trace/tool_error.hpp"

namespace mpior::replay {

using trace::Event;
using trace::OpClass;
namespace fio = trace::fio;

namespace {

int amode_of(int64_t open_flags) {
  int acc = int(open_flags) & O_ACCMODE;
  int m = acc == O_RDONLY ? MPI_MODE_RDONLY : acc == O_WRONLY ? MPI_MODE_WRONLY : MPI_MODE_RDWR;
  if (open_flags & O_CREAT) m |= MPI_MODE_CREATE;
  if (open_flags & O_EXCL) m |= MPI_MODE_EXCL;
  if (open_flags & O_APPEND) m |= MPI_MODE_APPEND;
  return m;
}

// MPI_MODE_SEQUENTIAL in the traced amode: ROMIO's ADIO_SEQUENTIAL, the same
// value under MPICH and Open MPI. Such a file takes MPI_DISPLACEMENT_CURRENT
// views only, so the replay opens it so too.
constexpr int64_t kTracedSequential = 256;

int whence_of(int64_t w) { return w == SEEK_CUR ? MPI_SEEK_CUR : w == SEEK_END ? MPI_SEEK_END : MPI_SEEK_SET; }

// ROMIO makes its reduction operators on the first MPI_File_open: threads
// of one process opening at once may use one before it exists (seen as
// "Allreduce: Null MPI_Op"). A thread opens alone; with a block of ranks per
// process the opens are on MPI_COMM_SELF, so no open waits on another
// process while holding this.
std::mutex g_open_mutex;

}  // namespace

void MpiThreadOps::open_file(const Event& ev) {
  const trace::MpiioArgs a = mpiio_args(ev);
  const std::string* rel = io_.mapped(a.file());
  if (!rel) return io_.fail(ev, ENOENT, "file id outside the plan");
  int amode = amode_of(a.fextent());
  if (amode & MPI_MODE_CREATE) target_.sandbox->make_dirs(parent_of(*rel));
  if (int r = target_.sandbox->check_contained(*rel); r < 0) return io_.fail(ev, -r, "MPI_File_open");
  File f;
  Comm c;
  MPI_Comm on = MPI_COMM_SELF;
  if ((a.flags() & fio::kColl) && comm_of(ev, a.fcomm(), &c))
    if (MPI_Comm file = b_.file_comm(c.id); file != MPI_COMM_NULL) on = file, f.collective = true;
  if (!f.collective) amode &= ~MPI_MODE_EXCL;  // each rank alone: the first one made it
  // Opened alone, a rank replays shared-pointer calls with explicit offsets,
  // which a sequential file refuses.
  f.sequential = f.collective && (a.fextra() & kTracedSequential);
  if (f.sequential) amode |= MPI_MODE_SEQUENTIAL;
  std::string path = target_.sandbox->display(*rel);
  int rc;
  {
    std::lock_guard<std::mutex> lk(g_open_mutex);
    rc = MPI_File_open(on, path.c_str(), amode, b_.hints().info(), &f.fh);
  }
  if (rc == MPI_SUCCESS) b_.hints().opened(f.fh);
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(rc, text, &n);
    return io_.fail(ev, EIO, "MPI_File_open: " + std::string(text, size_t(n)));
  }
  File& slot = files_[a.handle()];
  if (slot.fh != MPI_FILE_NULL) MPI_File_close(&slot.fh);
  slot = std::move(f);
}

void MpiThreadOps::mpiio_block(const Event& ev) {
  const trace::MpiioArgs a = mpiio_args(ev);
  if (a.handle() != view_handle_) return;
  auto it = files_.find(view_handle_);
  if (it != files_.end()) it->second.view.blocks.emplace_back(a.offset(), a.count());
}

void MpiThreadOps::settle() {
  if (view_handle_ < 0) return;
  auto it = files_.find(std::exchange(view_handle_, -1));
  if (it != files_.end() && it->second.view.pending) apply_view(it->second);
}

void MpiThreadOps::apply_view(File& f) {
  View& v = f.view;
  v.pending = false;
  v.before.clear();
  v.size = 0;
  for (auto& [off, len] : v.blocks) v.before.push_back(v.size), v.size += len;
  MPI_Datatype ft = MPI_BYTE;
  bool tiled = v.extent > 0 && !v.blocks.empty();
  if (tiled) {
    // Not the _c constructors: ROMIO decodes views with MPI_Type_get_envelope.
    std::vector<int> lens;
    std::vector<MPI_Aint> offs;
    for (auto& [off, len] : v.blocks) lens.push_back(int(len)), offs.push_back(MPI_Aint(off));
    MPI_Datatype idx;
    check(MPI_Type_create_hindexed(int(lens.size()), lens.data(), offs.data(), MPI_BYTE, &idx),
          "MPI_Type_create_hindexed");
    check(MPI_Type_create_resized(idx, 0, MPI_Aint(v.extent), &ft), "MPI_Type_create_resized");
    MPI_Type_free(&idx);
    MPI_Type_commit(&ft);
  }
  // A MPI_MODE_SEQUENTIAL file takes MPI_DISPLACEMENT_CURRENT only.
  MPI_Offset disp = v.current && f.sequential ? MPI_DISPLACEMENT_CURRENT : MPI_Offset(v.disp);
  int rc = MPI_File_set_view(f.fh, disp, MPI_BYTE, ft, "native", MPI_INFO_NULL);
  if (tiled) MPI_Type_free(&ft);
  check(rc, "MPI_File_set_view");
}

// Byte `at` of the file as an offset in the view's data (bytes).
int64_t MpiThreadOps::data_offset(const View& v, int64_t at) const {
  int64_t rel = std::max<int64_t>(0, at - v.disp);
  if (v.extent <= 0 || v.blocks.empty() || v.size == 0) return rel;
  int64_t tile = rel / v.extent, within = rel % v.extent;
  for (size_t b = 0; b < v.blocks.size(); ++b) {
    auto [off, len] = v.blocks[b];
    if (within < off + len) return tile * v.size + v.before[b] + std::max<int64_t>(0, within - off);
  }
  return (tile + 1) * v.size;
}

int64_t MpiThreadOps::access(const Event& ev, File& f) {
  const trace::MpiioArgs a = mpiio_args(ev);
  int64_t flags = a.flags(), bytes = a.count();
  bool write = ev.op() == OpClass::mpiio_write, coll = f.collective && (flags & fio::kColl);
  // A collective call moving nothing on this rank is still the others'
  // partner (MPICH's zero_count test: only rank 0 reads in a read_all).
  if (bytes < 0 || (bytes == 0 && !coll) || (flags & fio::kEnd)) return 0;
  void* buf = write ? const_cast<char*>(b_.zeros(bytes)) : recv_buffer(bytes);
  MPI_Count n = MPI_Count(bytes);
  MPI_Status st;
  int rc;
  if (f.collective && (flags & fio::kOrdered)) {
    rc = write ? MPI_File_write_ordered_c(f.fh, buf, n, MPI_BYTE, &st)
               : MPI_File_read_ordered_c(f.fh, buf, n, MPI_BYTE, &st);
  } else if (f.collective && (flags & fio::kShared)) {
    rc = write ? MPI_File_write_shared_c(f.fh, buf, n, MPI_BYTE, &st)
               : MPI_File_read_shared_c(f.fh, buf, n, MPI_BYTE, &st);
  } else {
    int64_t traced = a.offset();
    MPI_Offset at = MPI_Offset(data_offset(f.view, std::max<int64_t>(0, traced)));
    // Each rank opened the file alone: the shared pointer is kept here (the
    // traced offset where known and several processes share the file).
    if ((flags & (fio::kShared | fio::kOrdered)) && (b_.procs() == 1 || traced < 0))
      at = MPI_Offset(b_.pointers().fetch_add(io_.global_file(a.file()), bytes, f.views));
    if (coll)
      rc = write ? MPI_File_write_at_all_c(f.fh, at, buf, n, MPI_BYTE, &st)
                 : MPI_File_read_at_all_c(f.fh, at, buf, n, MPI_BYTE, &st);
    else
      rc = write ? MPI_File_write_at_c(f.fh, at, buf, n, MPI_BYTE, &st)
                 : MPI_File_read_at_c(f.fh, at, buf, n, MPI_BYTE, &st);
  }
  if (rc != MPI_SUCCESS) {
    io_.fail(ev, EIO, fmt::format("{} bytes through MPI-IO", bytes));
    return 0;
  }
  MPI_Count done = 0;
  MPI_Get_count_c(&st, MPI_BYTE, &done);
  return done;
}

// Not on the watchdog's board: a long collective write is I/O, not a stall
// (its file barrier, where blocks of ranks meet, is).
int64_t MpiThreadOps::mpiio(const Event& ev) {
  const trace::MpiioArgs a = mpiio_args(ev);
  if (ev.ret != 0) return 0;  // it failed when traced
  // Ranks that open files alone still meet at collective calls, as the
  // threaded replay does: what one rank does first (a shared pointer moved)
  // the others see; and after those MPI ends with a synchronisation (every
  // rank truncates alone in a set_size: none may write before all did).
  int64_t flags = a.flags();
  bool alone = !b_.one_per_rank();
  if ((flags & fio::kColl) && !(flags & fio::kEnd) && alone) file_barrier(ev, 0);
  io_.sizes().mpiio(ev, io_.global_file(a.file()));
  int64_t bytes = mpiio_call(ev);
  if (!syncs_after(ev)) return bytes;
  if (alone) file_barrier(ev, 0);
  io_.sizes().synced(io_.global_file(a.file()));
  return bytes;
}

int64_t MpiThreadOps::mpiio_call(const Event& ev) {
  const trace::MpiioArgs a = mpiio_args(ev);
  OpClass op = ev.op();
  int64_t flags = a.flags();
  if (op == OpClass::mpiio_open) {
    open_file(ev);
    return 0;
  }
  if (op == OpClass::mpiio_delete) {
    const std::string* rel = io_.mapped(a.file());
    if (rel && target_.sandbox->check_contained(*rel) == 0)
      MPI_File_delete(target_.sandbox->display(*rel).c_str(), MPI_INFO_NULL);  // a racing delete may find none
    return 0;
  }
  auto it = files_.find(a.handle());
  if (it == files_.end()) return 0;
  File& f = it->second;
  switch (op) {
    case OpClass::mpiio_close:
      check(MPI_File_close(&f.fh), "MPI_File_close");
      files_.erase(it);
      return 0;
    case OpClass::mpiio_view:
      view_handle_ = a.handle();
      f.view = View{a.offset(), a.fextent(), std::max<int64_t>(1, a.fextra()), true, {}, {}, 0};
      if (a.flags() & fio::kUnflattened) f.view.extent = 0;  // contiguous from disp
      f.view.current = a.flags() & fio::kDisplacementCurrent;
      ++f.views;
      return 0;
    case OpClass::mpiio_size:
      if (trace::has_fact(ev.kind, trace::fact::grows_only))
        check(MPI_File_preallocate(f.fh, MPI_Offset(a.offset())), "MPI_File_preallocate");
      else
        check(MPI_File_set_size(f.fh, MPI_Offset(a.offset())), "MPI_File_set_size");
      return 0;
    case OpClass::mpiio_seek:
      if ((flags & fio::kShared) && f.collective)
        check(MPI_File_seek_shared(f.fh, MPI_Offset(a.offset() * f.view.etype), whence_of(a.fextent())),
              "MPI_File_seek_shared");
      else if ((flags & fio::kShared) && a.fextent() == SEEK_SET)
        b_.pointers().set(io_.global_file(a.file()), a.offset() * f.view.etype, f.views);
      return 0;
    case OpClass::mpiio_sync:
      check(MPI_File_sync(f.fh), "MPI_File_sync");
      return 0;
    case OpClass::mpiio_read:
    case OpClass::mpiio_write:
      return access(ev, f);
    default:
      return 0;
  }
}

}  // namespace mpior::replay
