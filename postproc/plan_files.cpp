#include "postproc/plan_files.hpp"

#include <fcntl.h>

#include <algorithm>
#include <unordered_map>

#include "trace/arg_views.hpp"
#include "trace/transfer.hpp"

namespace mpior::postproc {

using trace::OpClass;

FileResolution number_files(const TraceSet& set) {
  FileResolution out;
  std::unordered_map<std::string, int32_t> ids;
  auto id_of = [&](const std::string& path) {
    auto [it, fresh] = ids.try_emplace(path, int32_t(out.files.size()));
    if (fresh) out.files.push_back({path, false, false, 0});
    return it->second;
  };
  // The standard streams are global 0, 1, 2 even if no rank lists them first.
  for (const char* std_name : {"<stdin>", "<stdout>", "<stderr>"}) id_of(std_name);
  out.local_to_global.resize(size_t(set.size()));
  for (int32_t r = 0; r < set.size(); ++r) {
    auto& map = out.local_to_global[size_t(r)];
    for (const trace::FileEntry& f : set.ranks[size_t(r)].files) map.push_back(id_of(f.path));
  }
  return out;
}

namespace {

void mark(std::vector<bool>& by_file, size_t files, int32_t file) {
  if (by_file.size() <= size_t(file)) by_file.resize(files);
  by_file[size_t(file)] = true;
}

// A rank's first call on a file that succeeded without creating it found the
// file there, before the run or made by another rank (finish_files).
void note_first_use(FileResolution& files, const RankScope& scope, int32_t file, const trace::Event& ev, bool creates) {
  if (files.last_rank.size() < files.files.size()) files.last_rank.resize(files.files.size(), -1);
  if (files.last_rank[size_t(file)] == scope.rank()) return;
  files.last_rank[size_t(file)] = scope.rank();
  OpClass op = ev.op();
  bool succeeded = op == OpClass::fopen ? ev.ret == 1 : ev.ret >= 0;
  bool found = succeeded && !creates && op != OpClass::mkdir;
  if (files.rank_found.size() < files.files.size()) files.rank_found.resize(files.files.size());
  files.rank_found[size_t(file)] = found;
  if (found) mark(files.found, files.files.size(), file);
}

// A call that made the file (an open that created it, mkdir, the new name of
// a rename or link) and succeeded. The rank's calls come in the order they
// ran: one that found the file before it made it again saw it there before
// the run (`rm -f out.gz; gzip out`). Across ranks no such order is known
// (clocks aligned at MPI_Init drift by milliseconds on a loaded node).
void note_made(FileResolution& files, const RankScope& scope, int32_t file) {
  files.files[size_t(file)].created = true;
  bool this_rank = size_t(file) < files.last_rank.size() && files.last_rank[size_t(file)] == scope.rank();
  if (this_rank && size_t(file) < files.rank_found.size() && files.rank_found[size_t(file)])
    mark(files.found_then_made, files.files.size(), file);
}

std::vector<Meeting>& meetings_of(FileResolution& files, uint32_t stream) {
  if (files.rank_meetings.size() <= stream) files.rank_meetings.resize(size_t(stream) + 1);
  return files.rank_meetings[stream];
}

// Reads at a known offset say how large the file was at least; until the
// rank truncates the file, they also bound what was there before the run.
void note_reads(FileResolution& files, const RankScope& scope, const trace::Event& ev, const EventPos& pos) {
  trace::Transfer t[2];
  int n = trace::transfers(ev, t);
  for (int i = 0; i < n; ++i) {
    int32_t file = scope.file(ev, t[i].file_slot, pos);
    if (t[i].write || file < 0 || t[i].offset < 0 || t[i].bytes <= 0) continue;
    trace::PlanFile& f = files.files[size_t(file)];
    f.initial_size = std::max(f.initial_size, t[i].offset + t[i].bytes);
    RankRead& r = files.rank_reads[file];
    if (r.truncated) continue;
    r.extent = std::max(r.extent, t[i].offset + t[i].bytes);
    int64_t end = scope.aligned_ns(ev) + ev.dur_ns;
    if (end >= r.last_end_ns) r.stream = pos.stream, r.meetings_before = meetings_of(files, pos.stream).size();
    r.last_end_ns = std::max(r.last_end_ns, end);
  }
}

// A rank's first truncation of a file ends the reads that bound its size before the run.
void note_truncation(FileResolution& files, const RankScope& scope, int32_t file, const trace::Event& ev,
                     const EventPos& pos) {
  mark(files.truncated, files.files.size(), file);
  RankRead& r = files.rank_reads[file];
  if (r.truncated) return;
  r.truncated = true;
  if (files.pre_truncation.size() <= size_t(file)) files.pre_truncation.resize(files.files.size());
  PreTruncation& p = files.pre_truncation[size_t(file)];
  int64_t at = scope.aligned_ns(ev);
  if (at >= p.first_ns) return;
  p.first_ns = at, p.first_rank = scope.rank();
  p.first_met.clear();
  for (const Meeting& m : meetings_of(files, pos.stream)) p.first_met[m.comm] = std::max(p.first_met[m.comm], m.seq);
}

// x is known before a truncation whenever y is: it ended no later, reached
// as far, and met the others at the same meeting or earlier (or y met none).
bool beats(const ReadBound& x, const ReadBound& y) {
  bool met = y.next.comm < 0 || (x.next.comm == y.next.comm && x.next.seq <= y.next.seq);
  return x.last_end_ns <= y.last_end_ns && x.extent >= y.extent && met;
}

// Keeps the bounds no other beats.
void keep_bound(std::vector<ReadBound>& bounds, ReadBound b) {
  for (const ReadBound& x : bounds)
    if (beats(x, b)) return;
  std::erase_if(bounds, [&](const ReadBound& x) { return beats(b, x); });
  bounds.push_back(b);
}

// Ranks' clocks agree to well within this after alignment at MPI_Init (a few
// milliseconds apart with 8 ranks on 2 cores): a read ending this long before
// another rank's truncation came before it.
constexpr int64_t kCrossRankSkewNs = 20'000'000;

// The size a truncated file had before the run, as far as reads before its
// truncation show: a rank's own reads before it truncated the file (the
// rank's calls come in the order they ran), and any rank's that its thread
// followed by a meeting the truncating thread had left before it, or that
// ended well before the first truncation on aligned clocks (aligned clocks
// leave out the time a rank waited for a CPU, so a loaded node's ranks can
// be far apart on them: the meeting decides first). Reads after a truncation
// read what the run wrote (a shared output left by an earlier run, truncated,
// written and read back): they show nothing.
int64_t size_before_truncation(const PreTruncation& p, bool clocks_aligned) {
  auto met_before = [&](const ReadBound& b) {
    auto it = b.next.comm < 0 ? p.first_met.end() : p.first_met.find(b.next.comm);
    return it != p.first_met.end() && it->second >= b.next.seq;
  };
  auto before_first = [&](const ReadBound& b) {
    if (p.first_ns == INT64_MAX) return false;
    return met_before(b) || (clocks_aligned && b.last_end_ns + kCrossRankSkewNs < p.first_ns);
  };
  int64_t size = 0;
  for (const auto& [rank, b] : p.own)
    if (rank == p.first_rank || before_first(b)) size = std::max(size, b.extent);
  for (const ReadBound& b : p.reads)
    if (before_first(b)) size = std::max(size, b.extent);
  return size;
}

}  // namespace

void note_file_use(FileResolution& files, const RankScope& scope, const trace::Event& ev, const EventPos& pos,
                   trace::Level level) {
  namespace arg = trace::arg;
  // Reads by the application and under its MPI-IO calls bound the file's size;
  // the calls themselves: the application's and those under its MPI-IO calls.
  if (level != trace::Level::nested) note_reads(files, scope, ev, pos);
  if (ev.depth != 0 && (level != trace::Level::mpiio || ev.op() == OpClass::adone)) return;
  OpClass op = ev.op();
  int32_t file = scope.file(ev, arg::file, pos);
  if (file < 0) return;
  if (ev.depth == 0) {
    if (files.named_by_app.size() <= size_t(file)) files.named_by_app.resize(files.files.size());
    files.named_by_app[size_t(file)] = true;
  }
  bool creates = (op == OpClass::open || op == OpClass::fopen) && (file_args(ev).flags() & O_CREAT) != 0;
  note_first_use(files, scope, file, ev, creates);
  if (op == OpClass::rename || op == OpClass::link) {  // the new name is made by the call
    int32_t target = scope.file(ev, arg::file2, pos);
    if (target >= 0) note_first_use(files, scope, target, ev, true);
    if (target >= 0 && ev.ret == 0) note_made(files, scope, target);
    return;
  }
  trace::PlanFile& f = files.files[size_t(file)];
  bool opened = (op == OpClass::open && ev.ret >= 0) || (op == OpClass::fopen && ev.ret == 1);
  switch (op) {
    case OpClass::open:
    case OpClass::fopen:
      if (creates && opened) note_made(files, scope, file);
      if (opened && (file_args(ev).flags() & O_DIRECTORY)) f.directory = true;
      if (opened && (file_args(ev).flags() & O_TRUNC)) note_truncation(files, scope, file, ev, pos);
      if (opened && creates && (file_args(ev).flags() & O_EXCL)) mark(files.made_new, files.files.size(), file);
      break;
    case OpClass::mkdir:
      // A directory the application made: the replay makes it then, not before.
      f.directory = true;
      if (ev.ret == 0) note_made(files, scope, file);
      break;
    case OpClass::rmdir:
    case OpClass::opendir:
      f.directory = true;
      break;
    case OpClass::unlink:
      if (file_args(ev).flags() & AT_REMOVEDIR) f.directory = true;
      break;
    default:
      break;
  }
}

void end_rank_files(FileResolution& files, const RankScope& scope) {
  for (const auto& [file, r] : files.rank_reads) {
    if (r.extent <= 0) continue;
    if (files.pre_truncation.size() <= size_t(file)) files.pre_truncation.resize(files.files.size());
    PreTruncation& p = files.pre_truncation[size_t(file)];
    ReadBound b{r.last_end_ns, r.extent, {}};
    const std::vector<Meeting>& met = meetings_of(files, r.stream);
    if (r.meetings_before < met.size()) b.next = met[r.meetings_before];
    if (r.truncated) p.own.emplace_back(scope.rank(), b);
    keep_bound(p.reads, b);
  }
  files.rank_reads.clear();
  files.rank_meetings.clear();
}

void note_meeting(FileResolution& files, const RankScope& scope, const trace::Event& ev, const EventPos& pos) {
  if (!trace::is_mpi(ev.kind) || !trace::is_all_to_all(ev.op()) || ev.end_ns < ev.start_ns) return;
  meetings_of(files, pos.stream).push_back({scope.comm(ev, pos), trace::mpi_args(ev).coll_seq()});
}

void finish_files(FileResolution& files) {
  auto at = [](const std::vector<bool>& v, size_t i) { return i < v.size() && v[i]; };
  for (size_t i = 0; i < files.files.size(); ++i) {
    trace::PlanFile& f = files.files[i];
    f.existed = at(files.found_then_made, i) || (at(files.found, i) && !f.created);
  }
  // What the run read of a file after truncating it, it wrote first; what it
  // read before of a file that was there before the run (a restart file read,
  // then overwritten) was there.
  for (size_t i = 0; i < files.truncated.size() && i < files.files.size(); ++i) {
    if (!files.truncated[i]) continue;
    trace::PlanFile& f = files.files[i];
    bool bounded = f.existed && i < files.pre_truncation.size();
    f.initial_size = bounded ? size_before_truncation(files.pre_truncation[i], files.clocks_aligned) : 0;
  }
  // cp and gzip create their outputs exclusively; a later process of the
  // rank reading one (folded in as a thread) bounded its size as if it had
  // been there before the run.
  for (size_t i = 0; i < files.made_new.size() && i < files.files.size(); ++i)
    if (files.made_new[i] && !files.files[i].existed) files.files[i].initial_size = 0;
  // A file only ROMIO touched under MPI-IO calls and created in the run (its
  // shared file pointer, `.<name>.shfp.<n>`, deleted at MPI_File_close): what
  // it read, it wrote first. The replay must not make it beforehand: at
  // `--io-level mpiio` nothing would delete it again.
  for (size_t i = 3; i < files.files.size(); ++i) {
    bool named = i < files.named_by_app.size() && files.named_by_app[i];
    if (!named && files.files[i].created) files.files[i].initial_size = 0;
  }
}

}  // namespace mpior::postproc
