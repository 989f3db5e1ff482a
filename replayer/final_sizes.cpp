#include "replayer/final_sizes.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>

#include "replayer/mpiio_replay.hpp"
#include "replayer/setup.hpp"
#include "trace/arg_views.hpp"

namespace mpior::replay {
namespace {

using trace::Event;
using trace::OpClass;
namespace fio = trace::fio;

// A thread's steps of one file, merged two by two past this many (each
// merged step only widens the bounds).
constexpr size_t kMaxSteps = 32;
// How far two ranks' exact traced times may disagree (their clocks aligned
// at MPI_Init, a few microseconds apart at most).
constexpr int64_t kClockSlackNs = 50'000;
// fallocate modes that keep the size, or only grow it.
constexpr int64_t kFallocKeepSize = 1;

using Step = SizeLog::Step;

bool leaves_size(OpClass op) {
  switch (op) {
    case OpClass::close:
    case OpClass::read:
    case OpClass::seek:
    case OpClass::tell:
    case OpClass::sync:
    case OpClass::dup:
    case OpClass::stat:
    case OpClass::access:
    case OpClass::fclose:  // a stream's bytes are its writes', which the log does not follow
    case OpClass::mkdir:
    case OpClass::rmdir:
    case OpClass::opendir:
    case OpClass::readdir:
    case OpClass::closedir:
    case OpClass::advise:
    case OpClass::map:
    case OpClass::unmap:
    case OpClass::msync:
    case OpClass::remap:
    case OpClass::atest:
    case OpClass::await:
    case OpClass::acancel:
    case OpClass::adone:
    case OpClass::process:
      return true;
    default:
      return false;
  }
}

}  // namespace

SizeLog::File& SizeLog::at(int32_t g) {
  if (g != last_g_ || !last_) last_ = &files_[g], last_g_ = g;
  return *last_;
}

Step SizeLog::step(const Event& ev, const File& f, int64_t size) {
  ++seq_;
  return {ev.start_ns + clock_ns_, ev.end_ns + clock_ns_, seq_, seq_, f.epoch, f.epoch, world_, world_, size};
}

void SizeLog::set(int32_t g, const Event& ev, int64_t size) {
  File& f = at(g);
  f.has_set = true;
  f.set = step(ev, f, size);
  f.grows.clear();
}

void SizeLog::grow(int32_t g, const Event& ev, int64_t size) {
  File& f = at(g);
  Step s = step(ev, f, size);
  // An earlier growth no larger adds nothing this one does not: whatever
  // setting came before it came before this one too.
  while (!f.grows.empty() && f.grows.back().size <= size) f.grows.pop_back();
  f.grows.push_back(s);
  if (f.grows.size() <= kMaxSteps) return;
  Step& a = f.grows[0];
  const Step& b = f.grows[1];
  a.t1 = b.t1, a.seq1 = b.seq1, a.epoch1 = b.epoch1,
  a.world1 = b.world1;  // a's size, at the earliest of a and the latest of b
  f.grows.erase(f.grows.begin() + 1);
}

void SizeLog::unknown(int32_t g) {
  if (g >= 0) at(g).unknown = true;
}

void SizeLog::synced(int32_t g) {
  if (g >= 0) ++at(g).epoch;
}

void SizeLog::posix(const Event& ev, bool traced_ok, int32_t g, int32_t g2) {
  OpClass op = ev.op();
  if (op == OpClass::rename || op == OpClass::link || op == OpClass::copy) {
    unknown(g);  // sizes move or come from elsewhere (splice from a pipe: only the second is a file)
    unknown(g2);
    return;
  }
  if (g < 0) return;
  trace::Family family = trace::info(ev.kind).family;
  if (!traced_ok) {
    // Replayed all the same, and may do now what failed then.
    if (op == OpClass::open || op == OpClass::fopen || op == OpClass::unlink || op == OpClass::rename ||
        op == OpClass::truncate)
      unknown(g);
    return;
  }
  if (family == trace::Family::aio && op == OpClass::asubmit) return unknown(g);
  switch (op) {
    case OpClass::open:
    case OpClass::fopen: {
      int64_t flags = file_args(ev).flags();
      if (flags & O_APPEND) return unknown(g);  // where it writes, the traced offsets do not say
      if ((flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY) return set(g, ev, 0);
      if (flags & O_CREAT) grow(g, ev, 0);
      return;
    }
    case OpClass::write:
      if (family != trace::Family::posix || io_args(ev).offset() < 0) return unknown(g);
      if (ev.ret > 0) grow(g, ev, io_args(ev).offset() + ev.ret);
      return;
    case OpClass::truncate:
      return set(g, ev, io_args(ev).offset());
    case OpClass::allocate: {
      // posix_fallocate (returns_errno among the allocations) allocates as mode 0 does.
      const int64_t mode = trace::has_fact(ev.kind, trace::fact::returns_errno) ? 0 : file_args(ev).mode();
      if (mode == 0) return grow(g, ev, io_args(ev).offset() + io_args(ev).count());
      if (!(mode & kFallocKeepSize)) unknown(g);
      return;
    }
    case OpClass::unlink:
      if (!(file_args(ev).flags() & AT_REMOVEDIR)) set(g, ev, -1);
      return;
    default:
      if (!leaves_size(op)) unknown(g);  // a call the log does not model may have changed it
      return;
  }
}

void SizeLog::mpiio(const Event& ev, int32_t g) {
  const trace::MpiioArgs a = mpiio_args(ev);
  if (g < 0 || ev.ret != 0) return;
  int64_t flags = a.flags();
  switch (ev.op()) {
    case OpClass::mpiio_open:
      holes_[a.handle()] = false;
      if (a.fextra() & kTracedDeleteOnClose) return unknown(g);
      if (a.fextent() & O_CREAT) grow(g, ev, 0);
      return;
    case OpClass::mpiio_delete:
      return set(g, ev, -1);
    case OpClass::mpiio_view:
      // Data ends at offset + bytes only where the filetype has no gaps.
      holes_[a.handle()] = (flags & fio::kUnflattened) || a.fextent() != a.count();
      return;
    case OpClass::mpiio_size:
      if (trace::has_fact(ev.kind, trace::fact::grows_only)) return grow(g, ev, a.offset());
      return set(g, ev, a.offset());
    case OpClass::mpiio_write: {
      if ((flags & fio::kEnd) || a.count() <= 0) return;
      auto it = holes_.find(a.handle());
      if (it == holes_.end() || it->second || a.offset() < 0) return unknown(g);
      return grow(g, ev, a.offset() + a.count());
    }
    default:
      return;
  }
}

void SizeLog::append_to(std::vector<int64_t>& out) const {
  out.insert(out.end(), {exact_, world_, int64_t(files_.size())});
  auto put = [&](const Step& s) {
    out.insert(out.end(), {s.t0, s.t1, s.seq0, s.seq1, s.epoch0, s.epoch1, s.world0, s.world1, s.size});
  };
  for (const auto& [g, f] : files_) {
    out.insert(out.end(), {g, f.unknown, f.has_set, f.epoch, int64_t(f.grows.size())});
    put(f.set);
    for (const Step& s : f.grows) put(s);
  }
}

SizeLog SizeLog::read_from(const int64_t*& p, const int64_t* end) {
  auto take = [&] { return p < end ? *p++ : 0; };
  auto step = [&] {
    Step s;
    for (int64_t* v : {&s.t0, &s.t1, &s.seq0, &s.seq1, &s.epoch0, &s.epoch1, &s.world0, &s.world1, &s.size})
      *v = take();
    return s;
  };
  SizeLog log(0, take() != 0);
  log.world_ = take();
  for (int64_t n = take(); n > 0 && p < end; --n) {
    File& f = log.files_[int32_t(take())];
    f.unknown = take(), f.has_set = take(), f.epoch = take();
    int64_t grows = take();
    f.set = step();
    for (; grows > 0 && p < end; --grows) f.grows.push_back(step());
  }
  return log;
}

namespace {

struct Tagged {
  const Step* step;
  size_t log;
  bool exact;
};

struct FileSteps {
  bool unknown = false;
  // Every thread that changed it passed the same full collectives on
  // MPI_COMM_WORLD, and the same synchronisations of the file, at least one.
  bool worlds = true, epochs = true;
  int64_t world = -1, epoch = -1;
  std::vector<Tagged> sets, grows;
};

// Whether a surely happened before b.
bool surely_before(const Tagged& a, const Tagged& b, const FileSteps& fs) {
  if (a.log == b.log) return a.step->seq1 < b.step->seq0;
  if (a.exact && b.exact && a.step->t1 + kClockSlackNs < b.step->t0) return true;
  // a came before its thread ended a synchronisation b's thread had passed.
  return (fs.epochs && a.step->epoch1 < b.step->epoch0) || (fs.worlds && a.step->world1 < b.step->world0);
}

SizeBounds bounds_of(const FileSteps& fs, const trace::PlanFile& file) {
  SizeBounds b;
  if (fs.sets.empty()) {
    // From the state setup left: removed when the application made it, else
    // kept (at least its traced initial size) or never there.
    bool made = file.created && !file.existed;
    b.lower = file.existed ? file.initial_size : -1;
    b.upper = made ? -1 : kAnySize;
    for (const Tagged& g : fs.grows)
      b.lower = std::max(b.lower, g.step->size), b.upper = std::max(b.upper, g.step->size);
    return b;
  }
  const Tagged* last = &fs.sets[0];
  for (const Tagged& s : fs.sets)
    if (surely_before(*last, s, fs)) last = &s;
  std::vector<const Tagged*> maybe_last;  // the true last setting is one of them
  b.lower = kAnySize, b.upper = -1;
  for (const Tagged& s : fs.sets) {
    if (surely_before(s, *last, fs)) continue;
    maybe_last.push_back(&s);
    b.lower = std::min(b.lower, s.step->size), b.upper = std::max(b.upper, s.step->size);
  }
  for (const Tagged& g : fs.grows) {
    bool after_all = true, after_one = false;
    for (const Tagged* s : maybe_last) {
      after_all = after_all && surely_before(*s, g, fs);
      after_one = after_one || !surely_before(g, *s, fs);
    }
    if (after_all) b.lower = std::max(b.lower, g.step->size);
    if (after_one) b.upper = std::max(b.upper, g.step->size);
  }
  return b;
}

}  // namespace

std::map<int32_t, SizeBounds> expected_sizes(const trace::Plan& plan, const std::vector<const SizeLog*>& logs) {
  std::map<int32_t, FileSteps> files;
  for (size_t i = 0; i < logs.size(); ++i) {
    for (const auto& [g, f] : logs[i]->files()) {
      if (g < 3 || size_t(g) >= plan.files.size() || plan.files[size_t(g)].directory) continue;
      FileSteps& fs = files[g];
      int64_t world = logs[i]->world();
      fs.unknown = fs.unknown || f.unknown;
      fs.epochs = fs.epochs && f.epoch > 0 && (fs.epoch < 0 || fs.epoch == f.epoch);
      fs.worlds = fs.worlds && world > 0 && (fs.world < 0 || fs.world == world);
      fs.epoch = f.epoch, fs.world = world;
      bool exact = logs[i]->exact_times();
      if (f.has_set) fs.sets.push_back({&f.set, i, exact});
      for (const Step& s : f.grows) fs.grows.push_back({&s, i, exact});
    }
  }
  std::map<int32_t, SizeBounds> out;
  for (const auto& [g, fs] : files)
    if (!fs.unknown) out[g] = bounds_of(fs, plan.files[size_t(g)]);
  return out;
}

SizeCheck check_final_sizes(const trace::Plan& plan, const Target& target, const std::vector<const SizeLog*>& logs) {
  SizeCheck check;
  check.checked = 0;
  for (const auto& [g, want] : expected_sizes(plan, logs)) {
    // A relative path is each rank's own file below its own directory.
    if (target.relative[size_t(g)] || plan.files[size_t(g)].path.starts_with('<')) continue;
    struct stat st {};
    int r = target.sandbox->stat(target.mapped[size_t(g)], &st);
    if (r < 0 && r != -ENOENT) continue;  // not ours to judge (a path through a file, no permission)
    if (r == 0 && !S_ISREG(st.st_mode)) continue;
    int64_t got = r == 0 ? int64_t(st.st_size) : -1;
    ++check.checked;
    if (got < want.lower || got > want.upper) check.mismatches.push_back({plan.files[size_t(g)].path, want, got});
  }
  return check;
}

std::string describe(const SizeMismatch& m) {
  auto size = [](int64_t n) { return n < 0 ? std::string("absent") : fmt::format("{} bytes", n); };
  std::string want = m.want.lower == m.want.upper ? size(m.want.lower)
                     : m.want.upper == kAnySize   ? "at least " + size(m.want.lower)
                                                  : fmt::format("{} to {}", size(m.want.lower), size(m.want.upper));
  return fmt::format("{} ended {}, the plan says {}", m.path, size(m.got), want);
}

}  // namespace mpior::replay
