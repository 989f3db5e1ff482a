// The merged job trace's body (MergedJob, model.hpp): job id and size, the
// tables, the merged streams, then per rank its process record as a
// difference from the previous rank's (ranks of one job share host, program
// and directory; pids and clocks are close), its table indices and tallies.
#include <string>

#include "format_body.hpp"

namespace mpior::trace::body {
namespace {

// Wrapping arithmetic: a damaged file must not overflow a signed integer.
int64_t add(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t sub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }

enum Bits : uint8_t { kMpi = 1, kPruning = 2, kFinished = 4, kHost = 8, kExe = 16, kCmdline = 32, kCwd = 64 };

// A rank's indices as differences from the previous rank's at the same
// position: ranks that opened the same files in the same order give zeros.
void put_indices(Encoder& e, const std::vector<int32_t>& v, const std::vector<int32_t>& prev) {
  e.uv(v.size());
  for (size_t i = 0; i < v.size(); ++i) e.sv(int64_t(v[i]) - (i < prev.size() ? prev[i] : 0));
}

std::vector<int32_t> get_indices(Decoder& d, const std::vector<int32_t>& prev, size_t table, const char* what) {
  std::vector<int32_t> v(d.count(1));
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t x = add(d.sv(), i < prev.size() ? prev[i] : 0);
    if (x < 0 || uint64_t(x) >= table) d.fail(std::string(what) + " index " + std::to_string(x) + " outside its table");
    v[i] = int32_t(x);
  }
  return v;
}

void put_process(Encoder& e, const ProcessInfo& p, const ProcessInfo& prev) {
  uint8_t bits = uint8_t((p.mpi ? kMpi : 0) | (p.pruning ? kPruning : 0) | (p.finished ? kFinished : 0) |
                         (p.host != prev.host ? kHost : 0) | (p.exe != prev.exe ? kExe : 0) |
                         (p.cmdline != prev.cmdline ? kCmdline : 0) | (p.cwd != prev.cwd ? kCwd : 0));
  e.u8(bits);
  e.uv(uint64_t(p.rank - prev.rank));
  if (bits & kHost) e.str(p.host);
  if (bits & kExe) e.str(p.exe);
  if (bits & kCmdline) e.str(p.cmdline);
  if (bits & kCwd) e.str(p.cwd);
  e.sv(sub(p.pid, prev.pid));
  e.sv(sub(p.clock_mono_ns, prev.clock_mono_ns));
  e.sv(sub(sub(p.clock_real_ns, p.clock_mono_ns), sub(prev.clock_real_ns, prev.clock_mono_ns)));  // one host: ~0
  e.sv(sub(p.end_ns, prev.end_ns));
  e.sv(sub(p.clock_offset_ns, prev.clock_offset_ns));
}

ProcessInfo get_process(Decoder& d, const ProcessInfo& prev) {
  ProcessInfo p = prev;
  uint8_t bits = d.u8();
  p.mpi = bits & kMpi;
  p.pruning = bits & kPruning;
  p.finished = bits & kFinished;
  uint64_t step = d.uv();
  if (step == 0 || step > uint64_t(p.size)) d.fail("ranks do not ascend");
  p.rank = int32_t(int64_t(prev.rank) + int64_t(step));
  if (p.rank >= p.size) d.fail("rank " + std::to_string(p.rank) + " of " + std::to_string(p.size));
  if (bits & kHost) p.host = d.str();
  if (bits & kExe) p.exe = d.str();
  if (bits & kCmdline) p.cmdline = d.str();
  if (bits & kCwd) p.cwd = d.str();
  p.pid = add(p.pid, d.sv());
  p.clock_mono_ns = add(p.clock_mono_ns, d.sv());
  p.clock_real_ns = add(add(p.clock_mono_ns, sub(prev.clock_real_ns, prev.clock_mono_ns)), d.sv());
  p.end_ns = add(p.end_ns, d.sv());
  p.clock_offset_ns = add(p.clock_offset_ns, d.sv());
  return p;
}

}  // namespace

void put(Encoder& e, const MergedJob& m) {
  e.fixed64(m.job_id);
  e.sv(m.size);
  put_tables(e, m.files, m.comms);
  put_streams(e, m.streams);
  e.uv(m.ranks.size());
  ProcessInfo prev;
  prev.rank = -1;
  const MergedRank* last = nullptr;
  static const MergedRank kNone;
  for (const MergedRank& r : m.ranks) {
    put_process(e, r.process, prev);
    prev = r.process;
    put_indices(e, r.files, (last ? *last : kNone).files);
    put_indices(e, r.comms, (last ? *last : kNone).comms);
    last = &r;
    put_tallies(e, r.pruned);
    put_tallies(e, r.excluded);
  }
}

MergedJob get_merged_job(Decoder& d) {
  MergedJob m;
  m.job_id = d.fixed64();
  int64_t size = d.sv();
  if (size < 1 || size > (int64_t(1) << 30)) d.fail("job of " + std::to_string(size) + " ranks");
  m.size = int32_t(size);
  get_tables(d, &m.files, &m.comms);
  m.streams = get_streams(d);
  m.ranks.resize(d.count(8));
  ProcessInfo prev;
  prev.job_id = m.job_id;
  prev.size = m.size;
  prev.rank = -1;
  static const MergedRank kNone;
  for (size_t i = 0; i < m.ranks.size(); ++i) {
    MergedRank& r = m.ranks[i];
    const MergedRank& last = i ? m.ranks[i - 1] : kNone;
    r.process = get_process(d, prev);
    prev = r.process;
    r.files = get_indices(d, last.files, m.files.size(), "file");
    r.comms = get_indices(d, last.comms, m.comms.size(), "communicator");
    r.pruned = get_tallies(d);
    r.excluded = get_tallies(d);
  }
  if (m.ranks.empty()) d.fail("no ranks");
  return m;
}

}  // namespace mpior::trace::body
