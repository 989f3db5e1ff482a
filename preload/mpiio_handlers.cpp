#include "preload/mpiio_handlers.hpp"

#include <fcntl.h>

#include <cctype>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "preload/fd_table.hpp"
#include "preload/mpiio_hint_capture.hpp"
#include "preload/real_table.hpp"
#include "preload/shfp_capture.hpp"
#include "trace/arg_setters.hpp"

namespace mpior::preload::mpi {

using namespace trace;

namespace {

// The few PMPI functions the handlers ask (libmpior.so does not link MPI).
struct FilePmpi {
  decltype(&::PMPI_File_get_position) get_position = nullptr;
  decltype(&::PMPI_File_get_byte_offset) get_byte_offset = nullptr;
  decltype(&::PMPI_Type_get_extent_x) get_extent = nullptr;
  decltype(&::PMPI_File_get_view) get_view = nullptr;
  decltype(&::PMPI_Type_get_envelope) get_envelope = nullptr;
  decltype(&::PMPI_Type_free) type_free = nullptr;
  bool resolved = false;
};

FilePmpi& fpmpi() {
  static FilePmpi p;
  if (!p.resolved) {
    p.get_position = reinterpret_cast<decltype(p.get_position)>(real::resolve("PMPI_File_get_position"));
    p.get_byte_offset = reinterpret_cast<decltype(p.get_byte_offset)>(real::resolve("PMPI_File_get_byte_offset"));
    p.get_extent = reinterpret_cast<decltype(p.get_extent)>(real::resolve("PMPI_Type_get_extent_x"));
    p.get_view = reinterpret_cast<decltype(p.get_view)>(real::resolve("PMPI_File_get_view"));
    p.get_envelope = reinterpret_cast<decltype(p.get_envelope)>(real::resolve("PMPI_Type_get_envelope"));
    p.type_free = reinterpret_cast<decltype(p.type_free)>(real::resolve("PMPI_Type_free"));
    p.resolved = p.get_position && p.get_byte_offset && p.get_extent && p.get_view && p.get_envelope && p.type_free;
  }
  return p;
}

class HandleTable {
 public:
  FileHandle find(MPI_File fh) {
    std::lock_guard<std::mutex> lk(mutex_);
    auto it = handles_.find(fh);
    return it == handles_.end() ? FileHandle{} : it->second;
  }
  FileHandle add(MPI_File fh, int32_t file, int32_t comm, bool excluded, bool sequential) {
    std::lock_guard<std::mutex> lk(mutex_);
    FileHandle h{excluded ? -1 : next_++, file, comm, excluded, sequential};
    handles_[fh] = h;
    return h;
  }
  void remove(MPI_File fh) {
    std::lock_guard<std::mutex> lk(mutex_);
    handles_.erase(fh);
  }

 private:
  std::mutex mutex_;
  std::unordered_map<MPI_File, FileHandle> handles_;
  int64_t next_ = 1;
};

HandleTable& handles() {
  static auto* t = new HandleTable();
  return *t;
}

// ROMIO accepts a file system prefix ("ufs:", "nfs:", "lustre:") before the path.
std::string file_path(const char* name) {
  if (!name) return {};
  const char* colon = std::strchr(name, ':');
  const char* slash = std::strchr(name, '/');
  if (colon && colon - name >= 2 && (!slash || colon < slash)) {
    bool word = true;
    for (const char* p = name; p < colon; ++p) word = word && (std::isalnum(uint8_t(*p)) || *p == '_');
    if (word) name = colon + 1;
  }
  return absolute_path(AT_FDCWD, name);
}

// open(2) flags equivalent to an MPI access mode.
int64_t open_flags(int amode) {
  int64_t f = (amode & MPI_MODE_RDWR) ? O_RDWR : (amode & MPI_MODE_WRONLY) ? O_WRONLY : O_RDONLY;
  if (amode & MPI_MODE_CREATE) f |= O_CREAT;
  if (amode & MPI_MODE_EXCL) f |= O_EXCL;
  if (amode & MPI_MODE_APPEND) f |= O_APPEND;
  return f;
}

// The file index of an MPI-IO file name; -1 unknown, kExcludedFile below an
// excluded prefix (dropped like the POSIX calls on such paths).
constexpr int32_t kExcludedFile = -2;

int32_t intern_path(const char* name) {
  std::string abs = file_path(name);
  if (abs.empty()) return -1;
  if (is_excluded(abs)) return kExcludedFile;
  return files().intern(abs, -1);
}

}  // namespace

FileHandle file_handle(MPI_File fh) noexcept {
  try {
    return handles().find(fh);
  } catch (...) {
    return {};
  }
}

bool fill_file(Call& c, int64_t rc, MPI_File fh, int64_t flags) noexcept {
  FileHandle h = file_handle(fh);
  if (h.excluded) {
    c.drop();
    return false;
  }
  auto& ev = c.ev();
  auto a = mpiio_args_mut(ev);
  a.handle() = h.id;
  a.file() = h.file;
  a.fcomm() = h.comm;
  a.flags() = flags;
  ev.ret = rc;
  return true;
}

void file_opened(Call& c, int rc, MPI_Comm comm, const char* name, int amode, MPI_File fh) noexcept {
  auto& ev = c.ev();
  int32_t comm_id = state().comm_id(comm);
  int32_t file = -1;
  int64_t id = -1;
  try {
    file = intern_path(name);
    if (rc == MPI_SUCCESS && fh != MPI_FILE_NULL)
      id = handles().add(fh, file, comm_id, file == kExcludedFile, amode & MPI_MODE_SEQUENTIAL).id;
  } catch (...) {
  }
  if (file == kExcludedFile) return c.drop_excluded();
  auto a = mpiio_args_mut(ev);
  a.handle() = id;
  a.file() = file;
  a.flags() = fio::kColl;
  a.fcomm() = comm_id;
  a.fextra() = amode;
  a.fextent() = open_flags(amode);
  ev.ret = rc;
}

void file_closed(Call& c, int rc, MPI_File fh) noexcept {
  (void)fill_file(c, rc, fh, fio::kColl);
  try {
    if (rc == MPI_SUCCESS) handles().remove(fh);
  } catch (...) {
  }
  if (rc == MPI_SUCCESS) forget_hints(fh);
}

void hints_changed(Call& c, MPI_File fh, MPI_Info given) noexcept {
  if (c.dropped()) return;
  FileHandle h = file_handle(fh);
  if (!h.excluded && h.file >= 0) note_hints(fh, h.file, given);
}

void file_deleted(Call& c, int rc, const char* name) noexcept {
  auto& ev = c.ev();
  mpiio_args_mut(ev).handle() = -1;
  try {
    mpiio_args_mut(ev).file() = intern_path(name);
  } catch (...) {
    mpiio_args_mut(ev).file() = -1;
  }
  if (mpiio_args_mut(ev).file() == kExcludedFile) return c.drop_excluded();
  mpiio_args_mut(ev).fcomm() = -1;
  ev.ret = rc;
}

namespace {
constexpr size_t kMaxViewBlocks = 1 << 16;

void record_block(Call& c, const Block& b) noexcept {
  RawEvent ev;
  ev.kind = Kind::mpior_block;
  ev.depth = uint8_t(c.ev().depth < 254 ? c.ev().depth + 1 : 255);
  ev.start = ev.end = clock::now();  // after the parent started: it stays first
  ev.callsite = c.ev().callsite;
  auto a = mpiio_args_mut(ev);
  a.handle() = mpiio_args_mut(c.ev()).handle();
  a.file() = mpiio_args_mut(c.ev()).file();
  a.offset() = b.offset;
  a.count() = b.length;
  record_event(ev);
}
}  // namespace

namespace {
// The file's view as MPI_File_get_view reports it: its displacement in bytes
// and its etype's extent; the types it hands back are freed unless
// predefined. False when it cannot be asked.
bool current_view(MPI_File fh, MPI_Offset* disp, MPI_Count* etype_extent) noexcept {
  FilePmpi& p = fpmpi();
  TracerGuard guard;
  MPI_Datatype types[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
  char datarep[MPI_MAX_DATAREP_STRING + 1];
  if (p.get_view(fh, disp, &types[0], &types[1], datarep) != MPI_SUCCESS) return false;
  MPI_Count lb = 0;
  if (p.get_extent(types[0], &lb, etype_extent) != MPI_SUCCESS) *etype_extent = 1;
  for (MPI_Datatype& t : types) {
    int ints = 0, addresses = 0, datatypes = 0, combiner = MPI_COMBINER_NAMED;
    if (t != MPI_DATATYPE_NULL && p.get_envelope(t, &ints, &addresses, &datatypes, &combiner) == MPI_SUCCESS &&
        combiner != MPI_COMBINER_NAMED)
      p.type_free(&t);
  }
  return true;
}

// The displacement MPI_DISPLACEMENT_CURRENT resolved to (the shared file
// pointer's position, in bytes). The flag stays set without it.
MPI_Offset resolved_displacement(MPI_File fh, MPI_Offset disp) noexcept {
  MPI_Offset now = disp;
  MPI_Count etype_extent = 1;
  return current_view(fh, &now, &etype_extent) ? now : disp;
}
}  // namespace

void view_set(Call& c, int rc, MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype) noexcept {
  if (!fill_file(c, rc, fh, fio::kColl)) return;
  auto& ev = c.ev();
  auto a = mpiio_args_mut(ev);
  a.offset() = disp;
  a.fextra() = expr::type_size(etype);
  a.count() = expr::type_size(filetype);
  if (rc != MPI_SUCCESS || !fpmpi().resolved) return;
  if (disp == MPI_DISPLACEMENT_CURRENT) {
    a.flags() |= fio::kDisplacementCurrent;
    disp = resolved_displacement(fh, disp);
    a.offset() = disp;
  }
  // Tile k of the filetype covers [disp + lb + k * extent, + extent): the
  // record's disp is where tile 0 starts, the blocks are relative to it.
  MPI_Count lb = 0, extent = 0;
  fpmpi().get_extent(filetype, &lb, &extent);
  a.offset() = disp + lb;
  a.fextent() = extent;
  try {
    std::vector<Block> blocks;
    if (!flatten_type(filetype, blocks, kMaxViewBlocks)) {
      a.flags() |= fio::kUnflattened;
      return;
    }
    for (const Block& b : blocks) record_block(c, {b.offset - lb, b.length});
  } catch (...) {
    a.flags() |= fio::kUnflattened;
  }
}

// `_shared` and `_ordered` calls: the MPI-IO library takes the offset from
// its shared file pointer under a lock, after the ordered token reached the
// rank; the pointer read before or after the call races with the other
// ranks. The offset recorded is the one the library took: ROMIO's read of its
// pointer file under the lock (shfp_capture.hpp), or the offset OMPIO passes
// to its internal *_at calls (ompio_capture.cpp): exact, no extra
// communication, no extra lock round. An MPI_Exscan of the byte counts on a
// private communicator would cost a collective per `_ordered` call and still
// need the pointer's value when the first rank took it. Nothing is read
// before the call: ROMIO opens its pointer file on first use, and an open
// made under the tracer's own MPI_File_get_position_shared would hide the file's
// calls. If nothing is seen, the offset stays unknown.
int64_t io_offset(MPI_File fh, int64_t flags, int64_t offset) noexcept {
  if (flags & fio::kEnd) return kUnknown;
  TracerGuard guard;
  FilePmpi& p = fpmpi();
  if (!p.resolved) return kUnknown;
  MPI_Offset pos = offset, byte = 0;
  if (flags & (fio::kShared | fio::kOrdered)) {
    t_shfp.armed = 1, t_shfp.got = 0;
    return kUnknown;
  } else if (!(flags & fio::kAt)) {
    if (p.get_position(fh, &pos) != MPI_SUCCESS) return kUnknown;
  }
  if (p.get_byte_offset(fh, pos, &byte) != MPI_SUCCESS) return kUnknown;
  return byte;
}

namespace {
// After the call: the byte offset of the shared pointer ROMIO used, if seen.
int64_t captured_offset(MPI_File fh, int64_t at) noexcept {
  bool got = t_shfp.got;
  t_shfp.armed = 0, t_shfp.got = 0;
  MPI_Offset byte = 0;
  if (!got || !fpmpi().resolved) return at;
  TracerGuard guard;
  // A MPI_MODE_SEQUENTIAL file has no byte offsets to ask for (ROMIO answers
  // 0); its views are contiguous: the displacement plus the pointer in etypes.
  if (file_handle(fh).sequential) {
    MPI_Offset disp = 0;
    MPI_Count etype_extent = 1;
    return current_view(fh, &disp, &etype_extent) ? int64_t(disp + t_shfp.value * etype_extent) : at;
  }
  return fpmpi().get_byte_offset(fh, t_shfp.value, &byte) == MPI_SUCCESS ? int64_t(byte) : at;
}
}  // namespace

void io_done(Call& c, int rc, MPI_File fh, int64_t flags, int64_t at, int64_t bytes, MPI_Request* request) noexcept {
  if (t_shfp.armed) at = captured_offset(fh, at);
  bool traced = fill_file(c, rc, fh, flags);
  auto& ev = c.ev();
  auto a = mpiio_args_mut(ev);
  a.offset() = at;
  a.count() = bytes;
  if (!request || rc != MPI_SUCCESS) return;
  try {
    // An excluded file's request is known but not logged: its Wait/Test
    // records no completion for it.
    FileHandle h = file_handle(fh);
    a.fextra() = state().add_request(*request, {-1, h.comm, h.id, 0, bytes, kReqFile, traced});
  } catch (...) {
    a.fextra() = -1;
  }
}

}  // namespace mpior::preload::mpi
