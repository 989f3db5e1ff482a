#include "postproc/summary.hpp"

#include "trace/arg_views.hpp"
#include "trace/transfer.hpp"

namespace mpior::postproc {

namespace arg = trace::arg;
using trace::OpClass;

RankTotals Summary::total() const {
  RankTotals t;
  int64_t compute = 0;
  for (const RankTotals& r : ranks) {
    t.io_ns += r.io_ns;
    t.mpi_ns += r.mpi_ns;
    t.traced_ns += r.traced_ns;
    t.cpu_wait_ns += r.cpu_wait_ns;
    compute += r.compute_ns();
  }
  // Keep io + mpi + compute + cpu wait == traced when a rank's calls overlapped.
  t.traced_ns = std::max(t.traced_ns, t.io_ns + t.mpi_ns + compute + t.cpu_wait_ns);
  return t;
}

namespace {
// Every field of the totals is summed below: a new one must be added here.
static_assert(sizeof(FileTotals) == 11 * 8 && sizeof(KindTotals) == 5 * 8 && sizeof(RankTotals) == 5 * 8);

void add_to(RankTotals& r, const RankTotals& o) {
  r.io_ns += o.io_ns;
  r.mpi_ns += o.mpi_ns;
  r.traced_ns += o.traced_ns;
  r.cpu_wait_ns += o.cpu_wait_ns;
  r.signal_unrecorded += o.signal_unrecorded;
}

void add_to(KindTotals& k, const KindTotals& o, uint64_t times) {
  k.calls += o.calls * times;
  k.pruned += o.pruned * times;
  k.excluded += o.excluded * times;
  k.time_ns += o.time_ns * int64_t(times);
  k.bytes += o.bytes * int64_t(times);
}

void add_to(FileTotals& f, const FileTotals& g) {
  f.bytes_written += g.bytes_written;
  f.bytes_read += g.bytes_read;
  f.mapped_written += g.mapped_written;
  f.mapped_read += g.mapped_read;
  f.stdio_read += g.stdio_read;
  f.nested_written += g.nested_written;
  f.nested_read += g.nested_read;
  f.ops += g.ops;
  f.mpiio_written += g.mpiio_written;
  f.mpiio_read += g.mpiio_read;
  f.mpiio_ops += g.mpiio_ops;
}
}  // namespace

void Summary::add(const Summary& o) {
  for (size_t i = 0; i < ranks.size() && i < o.ranks.size(); ++i) add_to(ranks[i], o.ranks[i]);
  for (size_t i = 0; i < kinds.size() && i < o.kinds.size(); ++i) add_to(kinds[i], o.kinds[i], 1);
  for (size_t i = 0; i < files.size() && i < o.files.size(); ++i) add_to(files[i], o.files[i]);
  mpi_logged += o.mpi_logged;
  mpi_pruned += o.mpi_pruned;
  pruning = pruning || o.pruning;
}

void Summary::add_class(const Summary& o, const std::vector<int64_t>& members,
                        const std::vector<trace::PlanRank>& tables) {
  uint64_t n = members.size();
  for (int64_t r : members) {
    add_to(ranks[size_t(r)], o.ranks[0]);
    const std::vector<int32_t>& table = tables[size_t(r)].files;
    for (size_t local = 0; local < o.files.size() && local < table.size(); ++local)
      if (table[local] >= 0) add_to(files[size_t(table[local])], o.files[local]);
  }
  for (size_t i = 0; i < kinds.size() && i < o.kinds.size(); ++i) add_to(kinds[i], o.kinds[i], n);
  mpi_logged += o.mpi_logged * n;
  mpi_pruned += o.mpi_pruned * n;
  pruning = pruning || o.pruning;
}

SummaryCollector::SummaryCollector(size_t ranks, size_t files, int32_t first_rank) : first_rank_(first_rank) {
  s_.ranks.resize(ranks);
  s_.kinds.resize(trace::kNumKinds);
  s_.files.resize(files);
}

void SummaryCollector::begin_rank(const RankScope& scope, const trace::RankTrace& trace) {
  begin_rank(scope.rank(), trace.process.end_ns, trace.process.cpu_wait_ns);
  add_pruned(scope.rank(), trace.process.pruning, trace.pruned);
  for (size_t k = 0; k < trace::kNumKinds; ++k) s_.kinds[k].excluded += trace.excluded[k].calls;
  for (const trace::KindTally& t : trace.unrecorded) s_.ranks[size_t(scope.rank())].signal_unrecorded += t.calls;
}

void SummaryCollector::begin_rank(int32_t rank, int64_t traced_ns, int64_t cpu_wait_ns) {
  this->rank(rank).traced_ns = traced_ns;
  this->rank(rank).cpu_wait_ns = cpu_wait_ns;
}

void SummaryCollector::add_pruned(int32_t rank, bool pruning, const trace::KindTallies& pruned) {
  s_.pruning = s_.pruning || pruning;
  RankTotals none;
  RankTotals& r = rank >= 0 ? this->rank(rank) : none;
  for (size_t k = 0; k < trace::kNumKinds; ++k) {
    const trace::KindTally& p = pruned[k];
    if (!p.calls) continue;
    s_.kinds[k].calls += p.calls;
    s_.kinds[k].pruned += p.calls;
    s_.kinds[k].time_ns += p.time_ns;
    if (trace::is_mpi(trace::Kind(k))) {
      s_.mpi_pruned += p.calls;
      r.mpi_ns += p.time_ns;
    } else if (trace::is_io(trace::Kind(k))) {
      r.io_ns += p.time_ns;
    }
  }
}

void SummaryCollector::observe(const RankScope& scope, const trace::Event& ev, const EventPos& pos) {
  bool io = trace::is_io(ev.kind), mpi = trace::is_mpi(ev.kind);
  trace::Level level = levels_.observe(scope.rank(), ev);
  if (io) count_bytes(scope, ev, pos, level);
  if (ev.depth != 0) return;
  if (trace::is_mpiio(ev.kind)) return observe_mpiio(scope, ev, pos);
  if (!io && !mpi) return;
  if (mpi) ++s_.mpi_logged;
  if (ev.flags & trace::flag::on_behalf) return;  // the sender's call, logged by this rank
  KindTotals& k = s_.kinds[size_t(ev.kind)];
  RankTotals& r = rank(scope.rank());
  ++k.calls;
  k.time_ns += ev.dur_ns;
  if (mpi) {
    r.mpi_ns += ev.dur_ns;
    k.bytes += std::max<int64_t>(0, mpi_args(ev).bytes());
    return;
  }
  r.io_ns += ev.dur_ns;
  int32_t file = scope.file(ev, arg::file, pos);
  if (file >= 0) ++s_.files[size_t(file)].ops;
}

namespace {
// The function an AIO request's bytes count for: aio_write or aio_read (a
// lio_listio entry's too), their *64 forms when a *64 call submitted it: a
// program built with _FILE_OFFSET_BITS=64 (fio's posixaio) calls only those,
// and bytes counted for aio_write would sit in a row of no calls, unshown.
trace::Kind aio_function(const trace::Event& ev, bool write) {
  int64_t by = aio_args(ev).submit_kind();  // 0 (open) in a trace from before it was recorded
  if (by == int64_t(trace::Kind::io_submit)) return trace::Kind::io_submit;  // libaio: its one submitting call
  bool large_file = by == int64_t(trace::Kind::aio_write64) || by == int64_t(trace::Kind::aio_read64) ||
                    by == int64_t(trace::Kind::lio_listio64);
  if (large_file) return write ? trace::Kind::aio_write64 : trace::Kind::aio_read64;
  return write ? trace::Kind::aio_write : trace::Kind::aio_read;
}
}  // namespace

// Bytes per file and per function, wherever the record sits: an AIO
// completion is nested under the call that learned of it, and counts for the
// submitting function. The POSIX calls under MPI-IO calls (trace::Level::mpiio)
// count in the file's bytes_* (not nested_*), never in a function's bytes:
// the MPI_File_* call's own bytes are its count x type size.
void SummaryCollector::count_bytes(const RankScope& scope, const trace::Event& ev, const EventPos& pos,
                                   trace::Level level) {
  trace::Transfer t[2];
  int n = trace::transfers(ev, t);
  for (int i = 0; i < n; ++i) {
    if (level == trace::Level::app) {
      trace::Kind k = ev.kind;
      if (ev.op() == OpClass::adone) k = aio_function(ev, t[i].write);
      if (i == 0) s_.kinds[size_t(k)].bytes += t[i].bytes;
    }
    int32_t file = scope.file(ev, t[i].file_slot, pos);
    if (file < 0) continue;
    FileTotals& f = s_.files[size_t(file)];
    if (level == trace::Level::nested) {
      (t[i].write ? f.nested_written : f.nested_read) += t[i].bytes;
      continue;
    }
    (t[i].write ? f.bytes_written : f.bytes_read) += t[i].bytes;
    if (t[i].mapped) (t[i].write ? f.mapped_written : f.mapped_read) += t[i].bytes;
    if (t[i].stdio && !t[i].write) f.stdio_read += t[i].bytes;
  }
}

// MPI-IO calls are I/O time; their bytes are what the application asked
// (count x type size), counted once for a split collective (at _begin).
void SummaryCollector::observe_mpiio(const RankScope& scope, const trace::Event& ev, const EventPos& pos) {
  KindTotals& k = s_.kinds[size_t(ev.kind)];
  ++k.calls;
  k.time_ns += ev.dur_ns;
  rank(scope.rank()).io_ns += ev.dur_ns;
  OpClass op = ev.op();
  int64_t bytes = 0;
  if ((op == OpClass::mpiio_read || op == OpClass::mpiio_write) && ev.ret == 0)
    bytes = std::max<int64_t>(0, io_args(ev).count());
  k.bytes += bytes;
  int32_t file = scope.file(ev, arg::file, pos);
  if (file < 0) return;
  FileTotals& f = s_.files[size_t(file)];
  ++f.ops;
  ++f.mpiio_ops;
  (op == OpClass::mpiio_write ? f.mpiio_written : f.mpiio_read) += bytes;
}

}  // namespace mpior::postproc
