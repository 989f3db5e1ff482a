#include "postproc/dump.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <ostream>

#include "merge/merge_job.hpp"
#include "postproc/comms.hpp"
#include "postproc/trace_set.hpp"
#include "trace/bytes_text.hpp"
#include "trace/format.hpp"
#include "trace/format_aggregate.hpp"
#include "trace/text.hpp"

namespace mpior::postproc {

namespace {

// File names and command lines as text (bytes_text.hpp).
std::string E(std::string_view s) { return trace::escape_bytes(s); }

template <typename T>
std::string list_text(const std::vector<T>& v) {
  return "[" + fmt::format("{}", fmt::join(v, ", ")) + "]";
}

void dump_header(const std::string& path, std::span<const uint8_t> bytes, std::ostream& out) {
  std::string type = trace::file_type(bytes);
  trace::Decoder h(bytes.subspan(8), path);
  uint32_t version = h.fixed32();
  uint8_t compression = h.u8();
  uint64_t body = h.fixed64(), stored = h.fixed64();
  out << fmt::format("{}: mpior {}, format version {}, {}, body {} bytes, stored {} bytes\n", path, type, version,
                     compression == 1   ? "zstd"
                     : compression == 0 ? "uncompressed"
                                        : "unknown compression",
                     body, stored);
}

void dump_job(const trace::JobInfo& j, std::ostream& out) {
  out << fmt::format("job {}: {} ranks, state {}\n", job_id_text(j.job_id), j.size,
                     j.state == trace::JobState::complete ? "complete" : "running");
  out << fmt::format("  command: {}\n  cwd: {}\n  host: {}\n  started (realtime ns): {}\n", E(j.cmdline), E(j.cwd),
                     E(j.host), j.start_real_ns);
  if (!j.mpi_library.empty() || !j.mpi_io.empty())
    out << fmt::format("  mpi: {} (MPI-IO: {})\n", E(j.mpi_library), j.mpi_io.empty() ? "not known" : E(j.mpi_io));
  if (!j.ompio_fcoll.empty()) out << fmt::format("  ompio fcoll: {}\n", E(j.ompio_fcoll));
  for (const trace::MpiioHintSet& s : j.mpiio_hints) {
    out << "  hints of " << E(s.path) << ":";
    for (const trace::MpiioHint& h : s.hints)
      out << fmt::format(" {}={}{}", E(h.key), E(h.value), h.given ? " (given)" : "");
    out << "\n";
  }
  if (j.mpiio_hint_sets_dropped)
    out << fmt::format("  hint sets not recorded (past {}): {}\n", j.mpiio_hints.size(), j.mpiio_hint_sets_dropped);
  out << "  ranks written: " << list_text(j.ranks_written) << "\n";
  for (const trace::TraceFileRanks& f : j.trace_files)
    out << "  " << f.name << ": ranks " << list_text(f.ranks) << "\n";
}

void dump_process(const trace::ProcessInfo& p, std::ostream& out) {
  out << fmt::format("process: job {}, rank {} of {}, mpi {}, {}\n", job_id_text(p.job_id), p.rank, p.size,
                     p.mpi ? "yes" : "no", p.finished ? "finished" : "checkpoint (not finished)");
  out << fmt::format("  pid {} on {}\n  exe: {}\n  command: {}\n  cwd: {}\n", p.pid, E(p.host), E(p.exe), E(p.cmdline),
                     E(p.cwd));
  out << fmt::format("  clocks at start: monotonic {} ns, realtime {} ns; traced {:.6f} s\n", p.clock_mono_ns,
                     p.clock_real_ns, double(p.end_ns) / 1e9);
  out << fmt::format("  clock offset to rank 0: {} ns\n", p.clock_offset_ns);
  out << fmt::format("  waited for a CPU (left out of computation): {:.6f} s\n", double(p.cpu_wait_ns) / 1e9);
  out << fmt::format("  CPU placement: {}\n", trace::placement_text(p.placement));
}

void dump_files(const std::vector<trace::FileEntry>& files, std::ostream& out) {
  out << "files (" << files.size() << "):\n";
  for (size_t i = 0; i < files.size(); ++i) {
    std::string flags = files[i].flags < 0 ? "-" : fmt::format("{:#o}", files[i].flags);
    out << fmt::format("  {:>4}  {}  flags {}\n", i, E(files[i].path), flags);
  }
}

void dump_comms(const std::vector<trace::CommEntry>& comms, std::ostream& out) {
  out << "communicators (" << comms.size() << "):\n";
  for (const trace::CommEntry& c : comms) {
    out << fmt::format("  {:>4}  {}", c.id, creator_name(c.origin));
    if (c.parent >= 0)
      out << fmt::format(" of {} after {} collectives (color {}, key {})", c.parent, c.parent_seq, c.color, c.key);
    out << "  members " << list_text(c.members) << "\n";
  }
}

void dump_pruned(const trace::KindTallies& pruned, std::ostream& out) {
  bool any = false;
  for (size_t k = 0; k < pruned.size(); ++k) {
    if (!pruned[k].calls) continue;
    if (!any) out << "pruned calls (counted, not kept):\n";
    any = true;
    out << fmt::format("  {:<24} {:>10} calls {:>14.6f} s\n", trace::name(trace::Kind(k)), pruned[k].calls,
                       double(pruned[k].time_ns) / 1e9);
  }
  if (!any) out << "pruned calls: none\n";
}

void dump_streams(const std::vector<trace::Stream>& streams, std::ostream& out) {
  out << "streams (" << streams.size() << "):\n";
  for (const trace::Stream& s : streams) trace::print_stream(out, s);
}

// How an extrapolated plan was made: its inputs and the model of every
// quantity that is not one constant, by stream and position.
void dump_extrap(const trace::Plan& p, std::ostream& out) {
  const trace::ExtrapInfo& x = p.extrap;
  if (!x.target) return;
  out << fmt::format("extrapolated to {} ranks from {} runs:\n", x.target, x.inputs.size());
  for (size_t i = 0; i < x.inputs.size(); ++i) out << fmt::format("  {} ({} ranks)\n", x.inputs[i], x.input_ranks[i]);
  out << "models (quantities that are not one constant):\n";
  for (const trace::ExtrapNote& n : x.notes) {
    std::string where = n.stream < 0 ? "tables" : fmt::format("stream {}", n.stream);
    if (n.stream >= 0 && n.leaf >= 0 && size_t(n.stream) < p.streams.size() &&
        size_t(n.leaf) < p.streams[size_t(n.stream)].leaves.size())
      where += fmt::format(" position {} ({})", n.leaf,
                           trace::name(p.streams[size_t(n.stream)].leaves[size_t(n.leaf)].kind));
    else if (n.node >= 0)
      where += fmt::format(" loop node {}", n.node);
    out << fmt::format("  {}: {}: {} [{}]\n", where, n.what, n.model, n.name);
  }
  size_t approximate = size_t(std::count_if(
      x.notes.begin(), x.notes.end(), [](const trace::ExtrapNote& n) { return n.name == trace::kApproximateModel; }));
  if (approximate)
    out << fmt::format("approximate: {} incidental quantities took the best fit, not an exact one\n", approximate);
}

void dump_plan(const trace::Plan& p, std::ostream& out) {
  dump_job(p.job, out);
  if (!p.missing.empty())
    out << "partial plan: ranks without a trace, their parts absent: " << list_text(p.missing) << "\n";
  out << "ranks (" << p.ranks.size() << "):\n";
  for (size_t r = 0; r < p.ranks.size(); ++r) {
    const trace::PlanRank& pr = p.ranks[r];
    out << fmt::format(
        "  rank {}: host {}, cwd {}, traced {:.6f} s, started at {:.6f} s, {}\n    files {}\n    comms {}\n", r,
        E(pr.host), E(pr.cwd), double(pr.traced_ns) / 1e9, double(pr.start_ns) / 1e9,
        trace::placement_text(pr.placement), list_text(pr.files), list_text(pr.comms));
  }
  out << "files (" << p.files.size() << "):\n";
  for (size_t i = 0; i < p.files.size(); ++i) {
    const trace::PlanFile& f = p.files[i];
    out << fmt::format("  {:>4}  {}{}{}  initial size {}\n", i, E(f.path), f.created ? "  created" : "",
                       f.directory ? "  directory" : "", f.initial_size);
  }
  out << "communicators (" << p.comms.size() << "):\n";
  for (size_t i = 0; i < p.comms.size(); ++i)
    out << fmt::format("  {:>4}  members {}  made by {}\n", i, list_text(p.comms[i].members),
                       postproc::creator_name(p.comms[i].origin));
  dump_pruned(p.pruned, out);
  dump_streams(p.streams, out);
  dump_extrap(p, out);
}

void dump_aggregate(const std::string& path, std::span<const uint8_t> bytes, std::ostream& out) {
  trace::AggregateIndex index = trace::decode_aggregate_index(bytes, path);
  out << fmt::format("{}: mpior aggregate trace, job {}, {} of {} ranks\n", path, job_id_text(index.job_id),
                     index.entries.size(), index.size);
  for (size_t i = 0; i < index.entries.size(); ++i) {
    const trace::AggregateEntry& e = index.entries[i];
    trace::aggregate_entry(bytes, index, i, path);
    out << fmt::format("  rank {}: bytes {}..{}, crc32c {:08x}\n", e.rank, index.data_start + e.offset,
                       index.data_start + e.offset + e.length, e.crc);
  }
}

// The merged job trace: the tables, each rank's indices into them, the
// merged streams. Each rank is expanded too, so a damaged file gets its one
// message before anything is printed.
void dump_merged(const std::string& path, std::span<const uint8_t> bytes, std::ostream& out) {
  trace::MergedJob m = trace::decode_merged_job(bytes, path);
  merge::rank_traces(m, path);
  dump_header(path, bytes, out);
  out << fmt::format("merged job trace: job {}, {} of {} ranks, {} streams\n", job_id_text(m.job_id), m.ranks.size(),
                     m.size, m.streams.size());
  for (const trace::MergedRank& r : m.ranks)
    out << fmt::format("  rank {}: pid {}, host {}, {}, {}, files {}, communicators {}\n", r.process.rank,
                       r.process.pid, E(r.process.host), r.process.finished ? "finished" : "unfinished",
                       trace::placement_text(r.process.placement), list_text(r.files), list_text(r.comms));
  dump_files(m.files, out);
  dump_comms(m.comms, out);
  dump_streams(m.streams, out);
}

}  // namespace

void dump_file(const std::string& given, std::ostream& out) {
  std::string path = given;
  std::vector<uint8_t> bytes;
  std::filesystem::path p(given);
  int32_t rank = trace::rank_from_file_name(p.filename().string());
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) {
    // A plan directory (what mpior-post writes, what mpior-replay reads): its plan.
    if (!std::filesystem::exists(p / trace::kPlanFileName, ec))
      throw trace::FormatError(given + ": a directory without " + trace::kPlanFileName +
                               " (give a trace, job or plan file, or a plan directory)");
    path = (p / trace::kPlanFileName).string();
    p = path;
  }
  if (rank >= 0 && !std::filesystem::exists(p, ec) &&
      std::filesystem::exists(p.parent_path() / trace::kJobFileName, ec)) {
    // A rank file the finalize aggregation replaced: its entry in the aggregate.
    auto held = held_rank(p.parent_path().string(), rank);
    if (!held)
      throw trace::FormatError(given + ": missing, and no aggregate file beside it holds rank " + std::to_string(rank));
    path = held->first;
    bytes = std::move(held->second);
  } else {
    bytes = trace::read_file(path);
  }
  std::string type = trace::file_type(bytes);
  if (type == "aggregate trace") return dump_aggregate(path, bytes, out);
  if (type == "merged job trace") return dump_merged(path, bytes, out);
  if (type.empty()) throw trace::FormatError(path + ": not an mpior file (bad magic number)");
  // Decode everything before printing anything: a damaged file gets one message.
  if (type == "rank trace") {
    trace::RankTrace t = trace::decode_rank_trace(bytes, path);
    dump_header(path, bytes, out);
    dump_process(t.process, out);
    dump_files(t.files, out);
    dump_comms(t.comms, out);
    dump_pruned(t.pruned, out);
    dump_streams(t.streams, out);
    if (t.spill_segments) out << fmt::format("spill segments before these streams: {}\n", t.spill_segments);
  } else if (type == "spill segment") {
    std::string damage;
    std::vector<trace::SpillSegment> segs = trace::decode_spill(bytes, path, &damage);
    std::vector<trace::Stream> streams;
    for (trace::SpillSegment& s : segs) streams.push_back(std::move(s.stream));
    out << fmt::format("{}: spill file, {} segments, {} bytes\n", path, streams.size(), bytes.size());
    if (!damage.empty()) out << "damaged: " << damage << "\n";
    dump_streams(streams, out);
  } else if (type == "job file") {
    trace::JobInfo j = trace::decode_job(bytes, path);
    dump_header(path, bytes, out);
    dump_job(j, out);
  } else {
    trace::Plan p = trace::decode_plan(bytes, path);
    dump_header(path, bytes, out);
    dump_plan(p, out);
  }
}

}  // namespace mpior::postproc
