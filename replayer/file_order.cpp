#include "replayer/file_order.hpp"

#include <fcntl.h>
#include <time.h>

#include <algorithm>

#include "replayer/pacing_clock.hpp"
#include "trace/arg_views.hpp"

namespace mpior::replay {

using trace::OpClass;
namespace arg = trace::arg;

namespace {

bool succeeded(const trace::Event& ev) {
  if (ev.op() == OpClass::fopen) return ev.ret != 0;
  if (trace::is_mpiio(ev.kind)) return ev.ret == 0;
  return ev.ret >= 0;
}

// The file slots whose names the event made or removed (0, 1 or 2 of
// arg::file, arg::file2), when it succeeded.
int changed_names(const trace::Event& ev, int64_t out[2]) {
  if (ev.depth != 0 || !succeeded(ev)) return 0;
  switch (ev.op()) {
    case OpClass::open:
    case OpClass::fopen:
      if (!(file_args(ev).flags() & O_CREAT)) return 0;
      out[0] = io_args(ev).file();
      return 1;
    case OpClass::unlink:
    case OpClass::mkdir:
    case OpClass::rmdir:
    case OpClass::mpiio_delete:
      out[0] = io_args(ev).file();
      return 1;
    case OpClass::rename:
      out[0] = io_args(ev).file(), out[1] = file_args(ev).file2();
      return 2;
    case OpClass::link:
      out[0] = file_args(ev).file2();
      return 1;
    default:
      return 0;
  }
}

// Waits are rare and short (another thread microseconds behind): polled.
template <class Ready>
bool poll_until(Ready ready, const std::atomic<bool>& aborted, int64_t bound_ns) {
  int64_t give_up = mono_now_ns() + bound_ns;
  timespec pause{0, 20'000};
  while (!ready()) {
    if (aborted.load(std::memory_order_relaxed) || mono_now_ns() >= give_up) return false;
    ::nanosleep(&pause, nullptr);
  }
  return true;
}

}  // namespace

bool FileOrder::orders(const trace::Event& ev) {
  switch (ev.op()) {
    case OpClass::open:
    case OpClass::fopen:
    case OpClass::stat:
    case OpClass::access:
    case OpClass::unlink:
    case OpClass::rename:
    case OpClass::mkdir:
    case OpClass::rmdir:
    case OpClass::link:
    case OpClass::opendir:
    case OpClass::mpiio_open:
    case OpClass::mpiio_delete:
      return ev.depth == 0;
    default:
      return false;
  }
}

FileOrder::FileOrder(const trace::Plan& plan, const std::vector<Thread>& threads, const trace::CursorOptions& opt)
    : plan_(plan), slots_(threads.size(), -1) {
  std::unordered_map<int32_t, int> per_rank;
  for (const Thread& t : threads) ++per_rank[t.rank];
  for (size_t i = 0; i < threads.size(); ++i) {
    if (per_rank[threads[i].rank] < 2) continue;
    slots_[i] = int(slot_rank_.size());
    slot_rank_.push_back(threads[i].rank);
    slot_exact_.push_back(threads[i].stream->lossless);
  }
  progress_.reset(new Progress[slot_rank_.size()]);
  for (size_t i = 0; i < threads.size(); ++i) {
    if (slots_[i] < 0) continue;
    trace::EventCursor cursor(*threads[i].stream, threads[i].rank, opt);
    trace::Event ev;
    while (cursor.next(ev)) {
      int64_t names[2];
      int n = changed_names(ev, names);
      for (int k = 0; k < n; ++k)
        if (names[k] >= 0) note(threads[i].rank, slots_[i], names[k], ev, cursor.delivered());
    }
  }
  // By end time, each change carrying the largest event number of those
  // ending no later (a thread's calls end in order, but times of statistical
  // streams are means).
  for (auto& [name, list] : by_name_)
    for (ThreadChanges& tc : list) {
      std::stable_sort(tc.by_end.begin(), tc.by_end.end(),
                       [](const Change& a, const Change& b) { return a.end_ns < b.end_ns; });
      uint64_t most = 0;
      for (Change& c : tc.by_end) c.event_no = most = std::max(most, c.event_no);
    }
}

bool FileOrder::key(int32_t rank, int64_t local, uint64_t* out) const {
  const std::vector<int32_t>& files = plan_.ranks[size_t(rank)].files;
  if (local < 0 || size_t(local) >= files.size()) return false;
  *out = (uint64_t(uint32_t(rank)) << 32) | uint32_t(files[size_t(local)]);
  return true;
}

void FileOrder::note(int32_t rank, int slot, int64_t file, const trace::Event& ev, uint64_t event_no) {
  uint64_t name;
  if (!key(rank, file, &name)) return;
  std::vector<ThreadChanges>& list = by_name_[name];
  if (list.empty()) changed_paths_.emplace(path_key(rank, plan_.files[name & 0xffffffffu].path), name);
  auto it = std::find_if(list.begin(), list.end(), [&](const ThreadChanges& tc) { return tc.slot == slot; });
  if (it == list.end()) it = list.insert(list.end(), ThreadChanges{slot, {}, {}});
  it->by_end.push_back({ev.end_ns, event_no});
  it->in_order.push_back(event_no);
  ++changes_;
}

std::string FileOrder::path_key(int32_t rank, const std::string& path) {
  std::string k = std::to_string(rank);
  k += ':';
  k += path;
  return k;
}

// The event's names (arg::file, and arg::file2 of a rename or link) that
// other threads change, and the directories above them that they change (a
// `mkdir -p src` before `> src/f1.c`).
void FileOrder::names_of(int32_t rank, const trace::Event& ev, std::vector<const Changes*>& out) const {
  bool two = ev.op() == OpClass::rename || ev.op() == OpClass::link;
  for (int64_t local : {io_args(ev).file(), two ? file_args(ev).file2() : int64_t(-1)}) {
    uint64_t name;
    if (!key(rank, local, &name)) continue;
    if (auto found = by_name_.find(name); found != by_name_.end()) out.push_back(&found->second);
    const std::string& path = plan_.files[name & 0xffffffffu].path;
    for (size_t slash = path.rfind('/'); slash != std::string::npos && slash > 0; slash = path.rfind('/', slash - 1)) {
      auto dir = changed_paths_.find(path_key(rank, path.substr(0, slash)));
      if (dir != changed_paths_.end()) out.push_back(&by_name_.at(dir->second));
    }
  }
}

bool FileOrder::satisfied(int slot, const Changes& changes, int64_t start_ns) const {
  for (const ThreadChanges& tc : changes) {
    if (tc.slot == slot || !slot_exact_[size_t(tc.slot)]) continue;
    auto after = std::upper_bound(tc.by_end.begin(), tc.by_end.end(), start_ns,
                                  [](int64_t t, const Change& c) { return t < c.end_ns; });
    if (after == tc.by_end.begin()) continue;
    uint64_t needed = std::prev(after)->event_no;
    if (progress_[size_t(tc.slot)].value.load(std::memory_order_acquire) < needed) return false;
  }
  return true;
}

bool FileOrder::wait_before(int slot, const trace::Event& ev, const std::atomic<bool>& aborted,
                            int64_t bound_ns) const {
  if (slot < 0 || by_name_.empty() || !slot_exact_[size_t(slot)]) return false;
  std::vector<const Changes*> names;
  names_of(slot_rank_[size_t(slot)], ev, names);
  auto ready = [&] {
    for (const Changes* c : names)
      if (!satisfied(slot, *c, ev.start_ns)) return false;
    return true;
  };
  if (ready()) return false;
  poll_until(ready, aborted, bound_ns);
  return true;
}

// Per other thread changing the name: the event number of its next change
// not yet replayed; returns whether any other thread changes it at all.
bool FileOrder::next_changes(int slot, const Changes& changes, Pending& out) const {
  bool any = false;
  for (const ThreadChanges& tc : changes) {
    if (tc.slot == slot) continue;
    any = true;
    uint64_t done = progress_[size_t(tc.slot)].value.load(std::memory_order_acquire);
    auto next = std::upper_bound(tc.in_order.begin(), tc.in_order.end(), done);
    if (next != tc.in_order.end()) out.push_back({tc.slot, *next});
  }
  return any;
}

bool FileOrder::others_change(int slot, const trace::Event& ev) const {
  if (slot < 0 || by_name_.empty()) return false;
  std::vector<const Changes*> names;
  names_of(slot_rank_[size_t(slot)], ev, names);
  Pending unused;
  for (const Changes* c : names)
    if (next_changes(slot, *c, unused)) return true;
  return false;
}

FileOrder::Pending FileOrder::pending_changes(int slot, const trace::Event& ev) const {
  std::vector<const Changes*> names;
  names_of(slot_rank_[size_t(slot)], ev, names);
  Pending next;
  for (const Changes* c : names) next_changes(slot, *c, next);
  return next;
}

bool FileOrder::wait_for_change(const Pending& pending, const std::atomic<bool>& aborted, int64_t bound_ns) const {
  if (pending.empty()) return false;
  auto one_done = [&] {
    for (auto [other, event_no] : pending)
      if (progress_[size_t(other)].value.load(std::memory_order_acquire) >= event_no) return true;
    return false;
  };
  return poll_until(one_done, aborted, bound_ns);
}

}  // namespace mpior::replay
