#include "summary.hpp"

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
    compute += r.compute_ns();
  }
  // Keep io + mpi + compute == traced when a rank's calls overlapped.
  t.traced_ns = std::max(t.traced_ns, t.io_ns + t.mpi_ns + compute);
  return t;
}

SummaryCollector::SummaryCollector(size_t ranks, size_t files) {
  s_.ranks.resize(ranks);
  s_.kinds.resize(trace::kNumKinds);
  s_.files.resize(files);
}

void SummaryCollector::begin_rank(const RankScope& scope, const trace::RankTrace& trace) {
  RankTotals& r = s_.ranks[size_t(scope.rank())];
  r.traced_ns = trace.process.end_ns;
  s_.pruning = s_.pruning || trace.process.pruning;
  for (size_t k = 0; k < trace::kNumKinds; ++k) {
    const trace::KindTally& p = trace.pruned[k];
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
  if (ev.depth == 0) under_mpiio_ = trace::is_mpiio(ev.kind);
  if (ev.depth != 0) {
    // The POSIX calls ROMIO made for an MPI-IO call: the file system's bytes.
    if (io && under_mpiio_) file_bytes(scope, ev, pos, false);
    return;
  }
  if (trace::is_mpiio(ev.kind)) return observe_mpiio(scope, ev, pos);
  if (!io && !mpi) return;
  if (mpi) ++s_.mpi_logged;
  if (ev.flags & trace::flag::on_behalf) return;  // the sender's call, logged by this rank
  KindTotals& k = s_.kinds[size_t(ev.kind)];
  RankTotals& r = s_.ranks[size_t(scope.rank())];
  ++k.calls;
  k.time_ns += ev.dur_ns;
  if (mpi) {
    r.mpi_ns += ev.dur_ns;
    k.bytes += std::max<int64_t>(0, ev.args[arg::bytes]);
    return;
  }
  r.io_ns += ev.dur_ns;
  OpClass op = ev.op();
  if ((op == OpClass::read || op == OpClass::write) && ev.ret >= 0) k.bytes += ev.ret;
  file_bytes(scope, ev, pos, true);
}

void SummaryCollector::file_bytes(const RankScope& scope, const trace::Event& ev, const EventPos& pos,
                                  bool count_call) {
  OpClass op = ev.op();
  bool moved = (op == OpClass::read || op == OpClass::write) && ev.ret >= 0;
  int32_t file = scope.file(ev, arg::file, pos);
  if (file < 0) return;
  FileTotals& f = s_.files[size_t(file)];
  if (count_call) ++f.ops;
  if (moved) (op == OpClass::write ? f.bytes_written : f.bytes_read) += ev.ret;
}

// MPI-IO calls are I/O time; their bytes are what the application asked
// (count x type size), counted once for a split collective (at _begin).
void SummaryCollector::observe_mpiio(const RankScope& scope, const trace::Event& ev, const EventPos& pos) {
  KindTotals& k = s_.kinds[size_t(ev.kind)];
  ++k.calls;
  k.time_ns += ev.dur_ns;
  s_.ranks[size_t(scope.rank())].io_ns += ev.dur_ns;
  OpClass op = ev.op();
  int64_t bytes = 0;
  if ((op == OpClass::mpiio_read || op == OpClass::mpiio_write) && ev.ret == 0)
    bytes = std::max<int64_t>(0, ev.args[arg::count]);
  k.bytes += bytes;
  int32_t file = scope.file(ev, arg::file, pos);
  if (file < 0) return;
  FileTotals& f = s_.files[size_t(file)];
  ++f.ops;
  ++f.mpiio_ops;
  (op == OpClass::mpiio_write ? f.mpiio_written : f.mpiio_read) += bytes;
}

}  // namespace mpior::postproc
