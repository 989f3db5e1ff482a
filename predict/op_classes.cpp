#include "predict/op_classes.hpp"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <utility>

#include "predict/predict.hpp"
#include "trace/arg_views.hpp"
#include "trace/cursor.hpp"
#include "trace/event.hpp"

namespace mpior::predict {

namespace {

using trace::OpClass;

// One rank's use of one file: counts per direction (0 read, 1 write).
struct FileUse {
  int64_t n[2] = {0, 0}, jumps[2] = {0, 0}, last_end[2] = {-1, -1};
  int64_t lo = INT64_MAX, hi = 0, syncs = 0, written = 0;
  bool datasync = false;  // synced with fdatasync
  bool random(int dir) const { return n[dir] > 1 && 2 * jumps[dir] > n[dir] - 1; }
  int64_t sync_every() const {
    if (!syncs) return 0;
    return std::max<int64_t>(1, (n[1] + syncs / 2) / syncs);
  }
  int64_t write_size() const { return n[1] ? written / n[1] : 4096; }
};

bool is_sync_kind(std::string_view name) {
  return name == "fsync" || name == "fdatasync" || name == "syncfs" || name == "sync_file_range" ||
         name == "MPI_File_sync";
}

Op op_of(const trace::Event& ev) {
  switch (ev.op()) {
    case OpClass::read:
    case OpClass::mpiio_read:
      return Op::read;
    case OpClass::write:
    case OpClass::mpiio_write:
      return Op::write;
    case OpClass::open:
    case OpClass::fopen:
      return (file_args(ev).flags() & O_CREAT) ? Op::create : Op::open;
    case OpClass::mpiio_open:
      return (mpiio_args(ev).fextent() & O_CREAT) ? Op::create : Op::open;
    case OpClass::close:
    case OpClass::fclose:
    case OpClass::mpiio_close:
      return Op::close;
    case OpClass::sync:
    case OpClass::mpiio_sync:
      return is_sync_kind(trace::name(ev.kind)) ? Op::sync : Op::other;
    case OpClass::stat:
    case OpClass::access:
      return Op::stat;
    case OpClass::unlink:
    case OpClass::mpiio_delete:
      return Op::unlink;
    case OpClass::mkdir:
      return Op::mkdir;
    case OpClass::rmdir:
      return Op::rmdir;
    case OpClass::rename:
      return Op::rename;
    default:
      return Op::other;
  }
}

// The events summary.json counts as I/O time: depth 0, I/O or MPI-IO, not a
// send logged on another rank's behalf.
bool counts_as_io(const trace::Event& ev) {
  if (ev.depth != 0 || (ev.flags & trace::flag::on_behalf)) return false;
  if (trace::is_mpiio(ev.kind)) return true;
  return !trace::is_mpi(ev.kind) && trace::is_io(ev.kind);
}

int64_t bytes_of(const trace::Event& ev) {
  int64_t c = io_args(ev).count();
  return c >= 0 ? c : std::max<int64_t>(0, ev.ret);
}

// ftruncate, truncate or MPI_File_set_size to zero length (not a preallocation, which only grows a file).
bool truncates_to_zero(const trace::Event& ev) {
  bool sets_size = ev.op() == OpClass::mpiio_size && !trace::has_fact(ev.kind, trace::fact::grows_only);
  return (ev.op() == OpClass::truncate || sets_size) && io_args(ev).offset() == 0;
}

int64_t bucket(int64_t bytes) { return bytes <= 1 ? 1 : int64_t(std::bit_ceil(uint64_t(bytes))); }

using UseKey = std::pair<int32_t, int32_t>;  // rank, global file

// What a rank's open of a file has done so far: what its close finds (ClassKey::size, truncated): the
// bytes written since the open or its last sync, and whether a truncation to zero came before them.
struct OpenState {
  int64_t written = 0;
  bool truncated = false;
};

// Follows a rank's calls on a file in order. A close (which ends the open) of written bytes: its key takes
// them; returns them (0 for other calls).
int64_t follow_open(OpenState& st, Op op, const trace::Event& ev, ClassKey& k) {
  if (op == Op::create || op == Op::open) st = {};
  bool posix_open = (op == Op::create || op == Op::open) && !trace::is_mpiio(ev.kind);
  if (posix_open && (file_args(ev).flags() & O_TRUNC)) st.truncated = true;
  if (truncates_to_zero(ev)) st = {0, true};  // its dirty pages are dropped
  if (op == Op::write) st.written += bytes_of(ev);
  if (op == Op::sync) st.written = 0;  // nothing left for the close to flush
  if (op != Op::close) return 0;
  OpenState found = std::exchange(st, {});
  if (found.written > 0) k.size = bucket(found.written), k.truncated = found.truncated;
  return found.written;
}

using Span = std::pair<int64_t, int64_t>;  // a call's start and end on the ranks' aligned clocks

// The ranks in a class at once from its calls' spans (one rank's never
// overlap): the most at any instant, and the mean over the class's time of
// how many were in it (the integral of n^2 over that of n), which is how
// many ranks a call of the class typically ran beside, itself included.
void overlap(IoClass& c, const std::vector<Span>& spans) {
  std::vector<std::pair<int64_t, int>> edges;
  for (auto [a, b] : spans)
    if (b > a) edges.insert(edges.end(), {{a, 1}, {b, -1}});
  std::sort(edges.begin(), edges.end());  // at one instant the ends first: calls back to back do not overlap
  int n = 0;
  int64_t last = 0;
  double sum = 0, squares = 0;
  for (auto [t, d] : edges) {
    double dt = double(t - last);
    sum += n * dt;
    squares += double(n) * n * dt;
    n += d;
    last = t;
    c.peak = std::max(c.peak, n);
  }
  c.at_once = sum > 0 ? squares / sum : 0.0;
}

// Metadata concurrency by synchronisation epoch: a rank's calls between two
// of its collectives (barriers, allreduces; the tracer numbers each rank's
// collectives per communicator) are in the epoch the earlier one opened, and
// ranks that make a class's calls in one epoch are in it at once. A metadata
// call is short beside the loop around it (an mdtest rank's create, its
// write and close, the next create), and a rebuilt timeline's clocks can
// place two ranks' loops between one pair of barriers far apart: their spans
// say little of whether the ranks contended for the directory, the
// synchronisations they passed together do. Data calls are long beside their
// gaps and keep their own spans (ranks taking turns at a write stay one at a
// time), but for writes synced to a shared file (counted_by_epoch). Epoch
// {-1, -1}: before the rank's first collective.
using Epoch = std::pair<int64_t, int64_t>;  // global communicator, the collective's number on it

struct EpochUse {
  std::set<int32_t> ranks;
  int64_t ns = 0;
};

// The ranks at once of a metadata class from its epochs: the most in one, and
// the mean over the class's time of how many made its calls in the epoch a
// call was in.
void by_epoch(IoClass& c, const std::map<Epoch, EpochUse>& epochs) {
  double sum = 0, weighted = 0;
  for (const auto& [e, use] : epochs) {
    double n = double(use.ranks.size()), t = double(std::max<int64_t>(use.ns, 1));
    sum += t;
    weighted += n * t;
    c.peak = std::max(c.peak, int32_t(use.ranks.size()));
  }
  c.at_once = sum > 0 ? weighted / sum : 0.0;
}

// Collectives that every member of their communicator passes together; a
// scan or a neighbourhood collective meets only some.
bool opens_epoch(const trace::Event& ev) {
  return ev.depth == 0 && trace::is_mpi(ev.kind) && trace::is_collective(ev.op()) &&
         !trace::has_fact(ev.kind, trace::fact::prefix) && !trace::has_fact(ev.kind, trace::fact::neighbor);
}

class Walker {
 public:
  explicit Walker(const trace::Plan& plan) : plan_(plan) {}

  // f(rank, event, global file, nested, epoch): nested is the time of the
  // file-system calls an MPI-IO call made under it, -1 for other calls or none
  // made; epoch the rank's synchronisation epoch at the call.
  template <typename F>
  void each(F&& f) const {
    for (const trace::Stream& s : plan_.streams)
      for (int64_t r : s.rank_list()) {
        trace::EventCursor cursor(s, int32_t(r));
        trace::Event ev, parent;
        int64_t nested = -1;
        bool pending = false;
        Epoch epoch{-1, -1}, parent_epoch = epoch;
        auto flush = [&] {
          if (pending) f(int32_t(r), parent, global_file(int32_t(r), parent), nested, parent_epoch);
          pending = false;
        };
        while (cursor.next(ev)) {
          if (ev.depth == 0) flush();
          if (opens_epoch(ev)) epoch = {global_comm(int32_t(r), mpi_args(ev).comm()), mpi_args(ev).coll_seq()};
          if (pending && ev.depth > 0 && trace::is_io(ev.kind) && !trace::is_mpi(ev.kind) && !trace::is_mpiio(ev.kind))
            nested = std::max<int64_t>(nested, 0) + ev.dur_ns;
          if (!counts_as_io(ev)) continue;
          if (trace::is_mpiio(ev.kind)) {
            parent = ev, nested = -1, pending = true, parent_epoch = epoch;  // its nested calls follow it
            continue;
          }
          f(int32_t(r), ev, global_file(int32_t(r), ev), int64_t(-1), epoch);
        }
        flush();
      }
  }

 private:
  // A rank's communicator as the plan's (its local id where the plan does not map it).
  int64_t global_comm(int32_t rank, int64_t local) const {
    if (rank < 0 || size_t(rank) >= plan_.ranks.size()) return local;
    const std::vector<int32_t>& comms = plan_.ranks[size_t(rank)].comms;
    return local >= 0 && size_t(local) < comms.size() ? comms[size_t(local)] : local;
  }
  int32_t global_file(int32_t rank, const trace::Event& ev) const {
    if (rank < 0 || size_t(rank) >= plan_.ranks.size()) return -1;
    const std::vector<int32_t>& files = plan_.ranks[size_t(rank)].files;
    int64_t local = io_args(ev).file();
    return local >= 0 && size_t(local) < files.size() ? files[size_t(local)] : -1;
  }
  const trace::Plan& plan_;
};

// Synced writes and their syncs are one job's (jobs.cpp): the ranks at once
// in their cycles, a write and its syncs, the job's concurrency for both.
ClassKey cycle_key(ClassKey k) {
  if (k.op == Op::write && k.sync_every > 0) k.op = Op::sync;
  return k;
}

// The instances of the collective MPI-IO calls: the k-th such call of each
// rank on a communicator is one (MPI: its members call its collectives in one
// order), and the file-system time each rank spent in it.
class Collectives {
 public:
  explicit Collectives(const trace::Plan& plan) : plan_(plan) {}
  // Before each walk: the calls are numbered again in walk order.
  void restart() { seq_.clear(); }
  // The next instance of this rank's call (walk order), or -1 when the call is not collective.
  int64_t next(int32_t rank, const trace::Event& ev) {
    if (!trace::is_mpiio(ev.kind) || rank < 0 || size_t(rank) >= plan_.ranks.size()) return -1;
    trace::MpiioArgs a = mpiio_args(ev);
    if (!(a.flags() & trace::fio::kColl)) return -1;
    const std::vector<int32_t>& comms = plan_.ranks[size_t(rank)].comms;
    int64_t local = a.fcomm(), comm = local >= 0 && size_t(local) < comms.size() ? comms[size_t(local)] : -1;
    if (comm < 0) return -1;
    int64_t n = seq_[{rank, comm}]++;
    return index_.try_emplace({comm, n}, int64_t(index_.size())).first->second;
  }
  void record(int64_t at, int32_t rank, int64_t fs_ns) {
    if (at < 0) return;
    if (size_t(at) >= top_.size()) top_.resize(size_t(at) + 1);
    Top& t = top_[size_t(at)];
    if (fs_ns > t.first) {
      t.second = t.first;
      t.first = fs_ns, t.first_rank = rank;
    } else {
      t.second = std::max(t.second, fs_ns);
    }
  }
  // How long the rank waited for the slowest other rank's file-system calls in the instance: their time
  // beyond its own.
  int64_t waited(int64_t at, int32_t rank, int64_t fs_ns) const {
    if (at < 0 || size_t(at) >= top_.size()) return 0;
    const Top& t = top_[size_t(at)];
    return std::max<int64_t>(0, (t.first_rank == rank ? t.second : t.first) - fs_ns);
  }

 private:
  struct Top {
    int64_t first = 0, second = 0;
    int32_t first_rank = -1;
  };
  const trace::Plan& plan_;
  std::map<std::pair<int32_t, int64_t>, int64_t> seq_;    // (rank, comm) -> its collective calls so far
  std::map<std::pair<int64_t, int64_t>, int64_t> index_;  // (comm, call number) -> instance
  std::vector<Top> top_;                                  // per instance: the two largest file-system times
};

Span span_of(const trace::Plan& plan, int32_t rank, const trace::Event& ev) {
  int64_t base = rank >= 0 && size_t(rank) < plan.ranks.size() ? plan.ranks[size_t(rank)].start_ns : 0;
  return {base + ev.start_ns, base + ev.end_ns};
}

// The own time of an MPI-IO call of class `in`, `waited` of it for the
// other ranks' file-system calls: counted in the shared or per-process
// mpiio_own class, by the class of the call it was spent in.
IoClass& add_own(std::map<ClassKey, IoClass>& found, const ClassKey& in, const trace::Event& ev, int32_t rank,
                 int64_t own, int64_t waited) {
  ClassKey key{Op::mpiio_own, 0, false, in.shared, 0, false, false};
  IoClass& m = found[key];
  m.key = key;
  ++m.count;
  m.time_ns += own;
  m.within[in] += own;
  if (waited > 0) m.waiting[in] += std::min(own, waited);
  m.ranks.insert(rank);
  m.kinds.insert(std::string(trace::name(ev.kind)));
  return m;
}

void observe_use(FileUse& u, Op op, const trace::Event& ev) {
  if (op == Op::sync) {
    ++u.syncs;
    u.datasync = u.datasync || trace::has_fact(ev.kind, trace::fact::datasync);
  }
  if (op != Op::read && op != Op::write) return;
  int dir = op == Op::write ? 1 : 0;
  int64_t off = io_args(ev).offset(), n = bytes_of(ev);
  if (dir) u.written += n;
  if (u.n[dir]++ && off >= 0 && off != u.last_end[dir]) ++u.jumps[dir];
  if (off >= 0) {
    u.last_end[dir] = off + n;
    u.lo = std::min(u.lo, off);
    u.hi = std::max(u.hi, off + n);
  }
}

ClassKey key_of(Op op, const trace::Event& ev, const FileUse* u, bool shared) {
  ClassKey k;
  k.op = op;
  k.shared = shared;
  if (!u) return k;
  if (op == Op::read || op == Op::write) {
    k.size = bucket(bytes_of(ev));
    k.random = u->random(op == Op::write ? 1 : 0);
  }
  if (op == Op::write || op == Op::sync) {
    k.sync_every = u->sync_every();
    k.datasync = k.sync_every && u->datasync;
  }
  if (op == Op::sync) {
    k.size = bucket(u->write_size());
    k.random = u->random(1);
  }
  return k;
}

// What an unlink of a file removes: the extent any rank wrote to it, and whether any synced it.
struct Removed {
  int64_t bytes = 0;
  bool synced = false;
};

std::map<int32_t, Removed> written_files(const std::map<UseKey, FileUse>& uses) {
  std::map<int32_t, Removed> out;
  for (const auto& [use, u] : uses) {
    Removed& r = out[use.second];
    if (u.n[1] && u.hi > 0) r.bytes = std::max(r.bytes, u.hi);
    r.synced = r.synced || u.syncs > 0;
  }
  return out;
}

}  // namespace

int32_t IoClass::concurrency() const {
  int32_t ever = std::max<int32_t>(1, int32_t(ranks.size()));
  double n = fitted_at_once > 0 ? fitted_at_once : at_once;
  if (!(n > 0)) return ever;
  return std::clamp<int32_t>(int32_t(std::llround(n)), 1, ever);
}

void fit_at_once(Classes& plan, int32_t ranks, const std::vector<std::pair<int32_t, Classes>>& traced) {
  for (IoClass& c : plan.classes) {
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const auto& [count, cs] : traced)
      for (const IoClass& t : cs.classes)
        if (t.key == c.key && t.at_once > 0) {
          double x = count, y = t.at_once;
          n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
        }
    double det = n * sxx - sx * sx;
    if (n < 2 || !(det > 0)) continue;
    double slope = (n * sxy - sx * sy) / det, at = (sy - slope * sx) / n + slope * double(ranks);
    c.fitted_at_once = std::clamp(at, 1.0, double(std::max<size_t>(1, c.ranks.size())));
  }
}

std::string_view op_name(Op op) {
  static constexpr std::string_view names[] = {"read",   "write", "create", "open",   "close", "sync",        "stat",
                                               "unlink", "mkdir", "rmdir",  "rename", "other", "MPI-IO's own"};
  return names[size_t(op)];
}

bool is_metadata(Op op) {
  return op != Op::read && op != Op::write && op != Op::sync && op != Op::other && op != Op::mpiio_own;
}

std::string size_text(int64_t b) {
  if (b >= (int64_t(1) << 30) && b % (int64_t(1) << 30) == 0) return fmt::format("{}GiB", b >> 30);
  if (b >= (int64_t(1) << 20) && b % (int64_t(1) << 20) == 0) return fmt::format("{}MiB", b >> 20);
  if (b >= 1024 && b % 1024 == 0) return fmt::format("{}KiB", b >> 10);
  return fmt::format("{}B", b);
}

bool may_flush(const ClassKey& k) { return k.op == Op::close && k.size > 0; }

std::string class_label(const ClassKey& k) {
  std::string s(op_name(k.op));
  if (k.op == Op::sync && k.datasync) s = "fdatasync";
  if (k.op == Op::sync && !k.datasync) s = "fsync";
  if (k.op == Op::close && k.size) s += " of " + size_text(k.size) + " written" + (k.truncated ? " truncated" : "");
  if (k.op != Op::close && k.size) s += " " + size_text(k.size) + (k.random ? " random" : " sequential");
  s += k.shared ? " shared" : " per-process";
  if (k.sync_every) s += fmt::format(" {}/{}", k.datasync ? "fdatasync" : "fsync", k.sync_every);
  return s;
}

namespace {
// Classes whose ranks are at once when they make its calls in one epoch:
// metadata, and writes synced to one shared file, whose fsyncs wait on the
// other ranks' dirty pages of it however the clocks place the calls (on a
// tmpfs trace the ranks' short writes drift apart and never overlap).
bool counted_by_epoch(const ClassKey& k) {
  return is_metadata(k.op) || (k.shared && k.sync_every > 0 && (k.op == Op::write || k.op == Op::sync));
}

int64_t median_of(const std::vector<int64_t>& v) { return std::llround(median({v.begin(), v.end()})); }

void by_time(std::vector<IoClass>& classes) {
  std::stable_sort(classes.begin(), classes.end(),
                   [](const IoClass& a, const IoClass& b) { return a.time_ns > b.time_ns; });
}
}  // namespace

namespace {
// The classes found, each with its ranks at once (by epoch or by its calls' spans), by traced time.
void at_once(Classes& out, std::map<ClassKey, IoClass>& found, std::map<ClassKey, std::vector<Span>>& spans,
             std::map<ClassKey, std::map<Epoch, EpochUse>>& epochs) {
  for (auto& [k, c] : found) {
    if (counted_by_epoch(k))
      by_epoch(c, epochs[cycle_key(k)]);
    else
      overlap(c, spans[cycle_key(k)]);
    out.classes.push_back(std::move(c));
  }
  by_time(out.classes);
}
}  // namespace

Classes derive_classes(const trace::Plan& plan) {
  Walker walk(plan);
  Collectives coll(plan);
  std::map<UseKey, FileUse> uses;
  std::map<int32_t, std::set<int32_t>> users;  // file -> ranks
  walk.each([&](int32_t rank, const trace::Event& ev, int32_t file, int64_t nested, Epoch) {
    coll.record(coll.next(rank, ev), rank, std::max<int64_t>(0, nested));
    if (file < 0) return;
    users[file].insert(rank);
    observe_use(uses[{rank, file}], op_of(ev), ev);
  });
  std::map<int32_t, Removed> written = written_files(uses);
  Classes out;
  out.extrapolated = plan.extrap.target != 0;
  std::map<ClassKey, IoClass> found;
  std::map<ClassKey, std::vector<Span>> spans;           // data classes' calls
  std::map<ClassKey, std::map<Epoch, EpochUse>> epochs;  // metadata classes'
  std::map<UseKey, OpenState> opens;
  std::set<int32_t> flushed;  // files closed after writes that followed a truncation to zero
  coll.restart();
  walk.each([&](int32_t rank, const trace::Event& ev, int32_t file, int64_t nested, Epoch epoch) {
    int64_t waited = coll.waited(coll.next(rank, ev), rank, std::max<int64_t>(0, nested));
    Op op = op_of(ev);
    auto u = file >= 0 ? uses.find({rank, file}) : uses.end();
    const FileUse* use = u == uses.end() ? nullptr : &u->second;
    bool shared = file >= 0 && users[file].size() > 1;
    ClassKey k = key_of(op, ev, use, shared);
    int64_t closed_bytes = file >= 0 ? follow_open(opens[{rank, file}], op, ev, k) : 0;
    if (closed_bytes > 0 && k.truncated) flushed.insert(file);
    IoClass& c = found[k];
    c.key = k;
    ++c.count;
    int64_t own = nested >= 0 ? std::max<int64_t>(0, ev.dur_ns - nested) : 0;
    c.time_ns += ev.dur_ns - own;
    out.io_ns += ev.dur_ns;
    if (counted_by_epoch(k)) {
      EpochUse& use = epochs[cycle_key(k)][epoch];
      use.ranks.insert(rank);
      use.ns += ev.dur_ns - own;
    } else {
      spans[cycle_key(k)].push_back(span_of(plan, rank, ev));
    }
    if (own > 0) spans[add_own(found, k, ev, rank, own, waited).key].push_back(span_of(plan, rank, ev));
    if (op == Op::unlink && file >= 0 && written.count(file)) {
      c.removed_bytes += written[file].bytes;
      c.removed_synced = c.removed_synced || written[file].synced;
      c.removed_flushed = c.removed_flushed || flushed.count(file);
    }
    if (op == Op::read && use && use->n[1] > 0) c.reads_written = true;
    c.bytes += closed_bytes;
    if (op == Op::read || op == Op::write) {
      c.bytes += bytes_of(ev);
      if (use && use->hi > use->lo) c.region = std::max(c.region, use->hi - use->lo);
    }
    c.ranks.insert(rank);
    c.kinds.insert(std::string(trace::name(ev.kind)));
  });
  at_once(out, found, spans, epochs);
  return out;
}

Classes combine_runs(const std::vector<Classes>& runs, size_t* median_run) {
  if (runs.size() == 1) return runs[0];
  std::map<ClassKey, IoClass> merged;
  std::map<ClassKey, std::vector<int64_t>> counts;
  Classes out;
  for (size_t r = 0; r < runs.size(); ++r) {
    out.io_runs_ns.push_back(runs[r].io_ns);
    out.extrapolated = out.extrapolated || runs[r].extrapolated;
    for (const IoClass& c : runs[r].classes) {
      auto [at, first] = merged.try_emplace(c.key, c);
      IoClass& m = at->second;
      m.traced_runs_ns.resize(runs.size(), 0);
      m.traced_runs_ns[r] = c.time_ns;
      m.ranks.insert(c.ranks.begin(), c.ranks.end());
      m.kinds.insert(c.kinds.begin(), c.kinds.end());
      m.region = std::max(m.region, c.region);
      m.reads_written = m.reads_written || c.reads_written;
      m.removed_flushed = m.removed_flushed || c.removed_flushed;
      if (!first) {  // the first run to have it was copied whole
        for (auto& [k, t] : c.within) m.within[k] += t;
        for (auto& [k, t] : c.waiting) m.waiting[k] += t;
        m.peak = std::max(m.peak, c.peak);
        m.at_once = std::max(m.at_once, c.at_once);
      }
      std::vector<int64_t>& n = counts[c.key];
      n.resize(runs.size(), 0);
      n[r] = int64_t(c.count);
    }
  }
  for (auto& [k, c] : merged) {
    int64_t count = median_of(counts[k]);
    if (c.count > 0) c.bytes = int64_t(double(c.bytes) / double(c.count) * double(count));
    if (c.count > 0) c.removed_bytes = int64_t(double(c.removed_bytes) / double(c.count) * double(count));
    c.count = uint64_t(count);
    c.time_ns = median_of(c.traced_runs_ns);
    out.classes.push_back(std::move(c));
  }
  out.io_ns = median_of(out.io_runs_ns);
  by_time(out.classes);
  if (median_run) {
    std::vector<size_t> order(runs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return runs[a].io_ns < runs[b].io_ns; });
    *median_run = order[(order.size() - 1) / 2];
  }
  return out;
}

}  // namespace mpior::predict
