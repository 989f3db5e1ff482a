// The merged job trace's body (MergedJob, model.hpp): job id and size, the
// tables (a path numbered like an earlier one as that entry and the
// number's difference, others as what they share with the previous path and
// the rest; communicators of one member, one rank further than the previous
// entry's, in a byte), the merged streams, then the ranks' process records, table indices
// and tallies, each as a difference from the previous rank's (ranks of one
// job share host, program and directory; pids and clocks are close), column
// by column.
#include <climits>
#include <optional>
#include <string>
#include <unordered_map>

#include "trace/format_fields.hpp"

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

// The ranks' records go column by column (flags, then pids, then clocks...):
// each column is a run of near-equal small numbers that compresses to
// little, where a record per rank would interleave them. A rank's end is
// told as its absolute end (trace start + end) against the previous
// rank's: ranks end together, at MPI_Finalize.
int64_t abs_end(const ProcessInfo& p) { return add(p.clock_mono_ns, p.end_ns); }

uint8_t bits_of(const ProcessInfo& p, const ProcessInfo& prev) {
  return uint8_t((p.mpi ? kMpi : 0) | (p.pruning ? kPruning : 0) | (p.finished ? kFinished : 0) |
                 (p.host != prev.host ? kHost : 0) | (p.exe != prev.exe ? kExe : 0) |
                 (p.cmdline != prev.cmdline ? kCmdline : 0) | (p.cwd != prev.cwd ? kCwd : 0));
}

void put_processes(Encoder& e, const std::vector<MergedRank>& ranks) {
  ProcessInfo none;
  none.rank = -1;
  auto prev = [&](size_t i) -> const ProcessInfo& { return i ? ranks[i - 1].process : none; };
  for (size_t i = 0; i < ranks.size(); ++i) {
    const ProcessInfo& p = ranks[i].process;
    uint8_t bits = bits_of(p, prev(i));
    e.u8(bits);
    e.uv(uint64_t(p.rank - prev(i).rank));
    if (bits & kHost) e.str(p.host);
    if (bits & kExe) e.str(p.exe);
    if (bits & kCmdline) e.str(p.cmdline);
    if (bits & kCwd) e.str(p.cwd);
  }
  for (size_t i = 0; i < ranks.size(); ++i) e.sv(sub(ranks[i].process.pid, prev(i).pid));
  for (size_t i = 0; i < ranks.size(); ++i) e.sv(sub(ranks[i].process.clock_mono_ns, prev(i).clock_mono_ns));
  for (size_t i = 0; i < ranks.size(); ++i) {  // one host: ~0
    const ProcessInfo &p = ranks[i].process, &q = prev(i);
    e.sv(sub(sub(p.clock_real_ns, p.clock_mono_ns), sub(q.clock_real_ns, q.clock_mono_ns)));
  }
  for (size_t i = 0; i < ranks.size(); ++i) e.sv(sub(abs_end(ranks[i].process), abs_end(prev(i))));
  for (size_t i = 0; i < ranks.size(); ++i) e.sv(sub(ranks[i].process.clock_offset_ns, prev(i).clock_offset_ns));
  for (size_t i = 0; i < ranks.size(); ++i) e.sv(ranks[i].process.cpu_wait_ns);
  for (size_t i = 0; i < ranks.size(); ++i) put_placement(e, ranks[i].process.placement);  // 2 bytes
}

void get_processes(Decoder& d, std::vector<MergedRank>& ranks, const ProcessInfo& first) {
  ProcessInfo none = first;
  auto prev = [&](size_t i) -> const ProcessInfo& { return i ? ranks[i - 1].process : none; };
  for (size_t i = 0; i < ranks.size(); ++i) {
    ProcessInfo& p = ranks[i].process;
    p = prev(i);
    uint8_t bits = d.u8();
    p.mpi = bits & kMpi;
    p.pruning = bits & kPruning;
    p.finished = bits & kFinished;
    uint64_t step = d.uv();
    if (step == 0 || step > uint64_t(p.size)) d.fail("ranks do not ascend");
    p.rank = int32_t(int64_t(prev(i).rank) + int64_t(step));
    if (p.rank >= p.size) d.fail("rank " + std::to_string(p.rank) + " of " + std::to_string(p.size));
    if (bits & kHost) p.host = d.str();
    if (bits & kExe) p.exe = d.str();
    if (bits & kCmdline) p.cmdline = d.str();
    if (bits & kCwd) p.cwd = d.str();
  }
  for (size_t i = 0; i < ranks.size(); ++i) ranks[i].process.pid = add(prev(i).pid, d.sv());
  for (size_t i = 0; i < ranks.size(); ++i) ranks[i].process.clock_mono_ns = add(prev(i).clock_mono_ns, d.sv());
  for (size_t i = 0; i < ranks.size(); ++i) {
    ProcessInfo &p = ranks[i].process, q = prev(i);
    p.clock_real_ns = add(add(p.clock_mono_ns, sub(q.clock_real_ns, q.clock_mono_ns)), d.sv());
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    ProcessInfo& p = ranks[i].process;
    p.end_ns = sub(add(abs_end(prev(i)), d.sv()), p.clock_mono_ns);
  }
  for (size_t i = 0; i < ranks.size(); ++i) ranks[i].process.clock_offset_ns = add(prev(i).clock_offset_ns, d.sv());
  for (size_t i = 0; i < ranks.size(); ++i)
    if ((ranks[i].process.cpu_wait_ns = d.sv()) < 0) d.fail("negative wait for a CPU");
  for (size_t i = 0; i < ranks.size(); ++i) ranks[i].process.placement = get_placement(d);
}

// Tallies as differences from the previous rank's: the same kinds (a 1) and
// near-equal counts cost a byte or two each.
void put_tallies_after(Encoder& e, const KindTallies& t, const KindTallies& prev) {
  bool same = true;
  for (size_t k = 0; k < t.size(); ++k) same = same && (t[k].calls != 0) == (prev[k].calls != 0);
  e.u8(same ? 1 : 0);
  if (!same) return put_fields(e, t);
  for (size_t k = 0; k < t.size(); ++k) {
    if (!t[k].calls) continue;
    e.sv(sub(int64_t(t[k].calls), int64_t(prev[k].calls)));
    e.sv(sub(t[k].time_ns, prev[k].time_ns));
  }
}

KindTallies get_tallies_after(Decoder& d, const KindTallies& prev) {
  uint8_t same = d.u8();
  if (same > 1) d.fail("a tally flag " + std::to_string(same));
  if (!same) return get_fields<KindTallies>(d);
  KindTallies t{};
  for (size_t k = 0; k < t.size(); ++k) {
    if (!prev[k].calls) continue;
    t[k].calls = uint64_t(add(int64_t(prev[k].calls), d.sv()));
    if (t[k].calls == 0) d.fail("a tally of no calls");
    t[k].time_ns = add(prev[k].time_ns, d.sv());
  }
  return t;
}

// A path's last run of decimal digits (rank-numbered files: out_17.dat),
// when it has one of at most 18 digits.
struct Numbered {
  size_t at = 0, width = 0;
  uint64_t n = 0;
};

std::optional<Numbered> last_number(std::string_view p) {
  size_t end = p.find_last_of("0123456789");
  if (end == std::string_view::npos) return std::nullopt;
  Numbered x;
  x.at = end;
  while (x.at > 0 && p[x.at - 1] >= '0' && p[x.at - 1] <= '9') --x.at;
  x.width = end + 1 - x.at;
  if (x.width > 18) return std::nullopt;
  for (size_t i = x.at; i <= end; ++i) x.n = x.n * 10 + uint64_t(p[i] - '0');
  return x;
}

// `p` with its last number replaced by n, zero-padded to the old width.
std::string renumbered(std::string_view p, const Numbered& x, uint64_t n) {
  std::string digits = std::to_string(n);
  if (digits.size() < x.width) digits.insert(0, x.width - digits.size(), '0');
  return std::string(p.substr(0, x.at)).append(digits).append(p.substr(x.at + x.width));
}

size_t shared_prefix(std::string_view a, std::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

// Each entry: the distance back to the last entry that differs from it only
// in the number (same text before and after it), then the number's and the
// flags' differences from that entry's; or 0, then how much of the previous
// path it starts with, the rest, the flags. A job's out_0 ... out_N cost a
// few equal bytes each.
void put_merged_files(Encoder& e, const std::vector<FileEntry>& files) {
  e.uv(files.size());
  std::unordered_map<std::string, size_t> last;  // text around the number -> entry
  for (size_t i = 0; i < files.size(); ++i) {
    const FileEntry& f = files[i];
    std::optional<Numbered> x = last_number(f.path);
    if (x) {
      std::string key = f.path.substr(0, x->at) + '\0' + f.path.substr(x->at + x->width);
      auto [it, fresh] = last.try_emplace(std::move(key), i);
      size_t ref = it->second;
      it->second = i;
      if (!fresh) {
        const FileEntry& r = files[ref];
        std::optional<Numbered> y = last_number(r.path);
        if (renumbered(r.path, *y, x->n) == f.path) {
          e.uv(i - ref);
          e.sv(int64_t(x->n - y->n));
          e.sv(sub(f.flags, r.flags));
          continue;
        }
      }
    }
    std::string_view prev = i ? std::string_view(files[i - 1].path) : std::string_view();
    size_t k = shared_prefix(prev, f.path);
    e.uv(0);
    e.uv(k);
    e.str(std::string_view(f.path).substr(k));
    e.sv(f.flags);
  }
}

std::vector<FileEntry> get_merged_files(Decoder& d) {
  std::vector<FileEntry> out(d.count(3));
  // entries copy earlier paths: a damaged file must not make them huge
  const size_t most = (size_t(64) << 20) + 1024 * d.size();
  size_t total = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (i > 0 && (total += out[i - 1].path.size()) > most) d.fail("file paths longer than the body could hold");
    uint64_t back = d.uv();
    if (back > i) d.fail("a file entry refers past the table's start");
    if (back) {
      const FileEntry& r = out[i - back];
      std::optional<Numbered> y = last_number(r.path);
      if (!y) d.fail("a file entry renumbers a path without a number");
      int64_t n = add(int64_t(y->n), d.sv());
      if (n < 0 || n > 999999999999999999) d.fail("a file entry's number " + std::to_string(n));
      out[i].path = renumbered(r.path, *y, uint64_t(n));
      out[i].flags = add(r.flags, d.sv());
      continue;
    }
    std::string_view prev = i ? std::string_view(out[i - 1].path) : std::string_view();
    uint64_t k = d.uv();
    if (k > prev.size()) d.fail("a file entry shares more than the previous path");
    out[i].path = std::string(prev.substr(0, k)) + d.str();
    out[i].flags = d.sv();
  }
  return out;
}

// A communicator entry equal to the one before it but for its one member,
// one rank further (MPI_COMM_SELF of consecutive ranks): a byte.
bool next_self(const CommEntry& c, const CommEntry& prev) {
  return c.members.size() == 1 && prev.members.size() == 1 && int64_t(c.members[0]) == int64_t(prev.members[0]) + 1 &&
         c.id == prev.id && c.origin == prev.origin && c.parent == prev.parent && c.parent_seq == prev.parent_seq &&
         c.color == prev.color && c.key == prev.key;
}

void put_comms(Encoder& e, const std::vector<CommEntry>& comms) {
  e.uv(comms.size());
  for (size_t i = 0; i < comms.size(); ++i) {
    bool next = i > 0 && next_self(comms[i], comms[i - 1]);
    e.u8(next);
    if (!next) put_comm(e, comms[i]);
  }
}

std::vector<CommEntry> get_comms(Decoder& d) {
  std::vector<CommEntry> out(d.count(1));
  for (size_t i = 0; i < out.size(); ++i) {
    uint8_t next = d.u8();
    if (next > 1) d.fail("a communicator entry's flag " + std::to_string(next));
    if (!next) {
      out[i] = get_comm(d);
      continue;
    }
    if (i == 0 || out[i - 1].members.size() != 1 || out[i - 1].members[0] == INT32_MAX)
      d.fail("a communicator entry follows none of one member");
    out[i] = out[i - 1];
    ++out[i].members[0];
  }
  return out;
}

}  // namespace

void put(Encoder& e, const MergedJob& m) {
  e.fixed64(m.job_id);
  e.sv(m.size);
  put_merged_files(e, m.files);
  put_comms(e, m.comms);
  put_fields(e, m.streams, true);  // compact
  e.uv(m.ranks.size());
  put_processes(e, m.ranks);
  static const MergedRank kNone;
  auto prev = [&](size_t i) -> const MergedRank& { return i ? m.ranks[i - 1] : kNone; };
  for (size_t i = 0; i < m.ranks.size(); ++i) put_indices(e, m.ranks[i].files, prev(i).files);
  for (size_t i = 0; i < m.ranks.size(); ++i) put_indices(e, m.ranks[i].comms, prev(i).comms);
  for (size_t i = 0; i < m.ranks.size(); ++i) put_tallies_after(e, m.ranks[i].pruned, prev(i).pruned);
  for (size_t i = 0; i < m.ranks.size(); ++i) put_tallies_after(e, m.ranks[i].excluded, prev(i).excluded);
  for (size_t i = 0; i < m.ranks.size(); ++i) put_tallies_after(e, m.ranks[i].unrecorded, prev(i).unrecorded);
}

MergedJob get_merged_job(Decoder& d) {
  MergedJob m;
  m.job_id = d.fixed64();
  int64_t size = d.sv();
  if (size < 1 || size > (int64_t(1) << 30)) d.fail("job of " + std::to_string(size) + " ranks");
  m.size = int32_t(size);
  m.files = get_merged_files(d);
  m.comms = get_comms(d);
  m.streams = get_fields<std::vector<Stream>>(d, true);
  m.ranks.resize(d.count(8));
  if (m.ranks.empty()) d.fail("no ranks");
  ProcessInfo first;
  first.job_id = m.job_id;
  first.size = m.size;
  first.rank = -1;
  get_processes(d, m.ranks, first);
  static const MergedRank kNone;
  auto prev = [&](size_t i) -> const MergedRank& { return i ? m.ranks[i - 1] : kNone; };
  for (size_t i = 0; i < m.ranks.size(); ++i) m.ranks[i].files = get_indices(d, prev(i).files, m.files.size(), "file");
  for (size_t i = 0; i < m.ranks.size(); ++i)
    m.ranks[i].comms = get_indices(d, prev(i).comms, m.comms.size(), "communicator");
  for (size_t i = 0; i < m.ranks.size(); ++i) m.ranks[i].pruned = get_tallies_after(d, prev(i).pruned);
  for (size_t i = 0; i < m.ranks.size(); ++i) m.ranks[i].excluded = get_tallies_after(d, prev(i).excluded);
  for (size_t i = 0; i < m.ranks.size(); ++i) m.ranks[i].unrecorded = get_tallies_after(d, prev(i).unrecorded);
  check_stream_ranks(d, m.streams, m.ranks.size());
  return m;
}

}  // namespace mpior::trace::body
