// Threads of one rank (its pthreads, and the processes it started, folded in
// as threads) hand files to each other by name: one makes, renames or removes
// a name, another uses the name after (git's pack-objects renames its pack,
// then git repack, its parent, stats it). Nothing the tracer records orders
// the two but the clock, and a thread a few microseconds late in the replay
// finds the name not yet there. FileOrder keeps the traced order two ways:
// - with exact times (MPIOR_TIMING=lossless on both threads) a call naming a
//   file waits until every other thread of its rank has replayed the changes
//   of that name that ended before the call began in the trace;
// - with per-position statistics, times drift (a mean gap per position: tens
//   of ms over git gc's 0.6 s), so a call that succeeded when traced and
//   fails for a name not (or still) there waits for another thread's next
//   change of that name, and is tried again.
// Ranks with one thread cost nothing: their threads get no slot.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace/cursor.hpp"
#include "trace/event.hpp"
#include "trace/model.hpp"

namespace mpior::replay {

class FileOrder {
 public:
  struct Thread {
    const trace::Stream* stream;
    int32_t rank;
  };
  // Walks the streams of every rank that has more than one thread, with the
  // cursor options the replay uses (the same event times).
  // Names are the plan's global files: a rank's processes each have their
  // own table, where one path has a local id per process.
  FileOrder(const trace::Plan& plan, const std::vector<Thread>& threads, const trace::CursorOptions& opt);

  // The slot of threads[i], or -1 when its rank has one thread.
  int slot(size_t i) const { return slots_[i]; }
  // Whether the event names a file whose name another thread may change.
  static bool orders(const trace::Event& ev);
  // Waits until the other threads of slot's rank replayed the changes of the
  // names ev uses that ended before ev began; gives up after `bound_ns` (a
  // thread that went another way than traced) or when `aborted`. Returns
  // whether it had to wait at all.
  bool wait_before(int slot, const trace::Event& ev, const std::atomic<bool>& aborted, int64_t bound_ns) const;
  // Whether another thread of slot's rank changes a name ev uses.
  bool others_change(int slot, const trace::Event& ev) const;
  // Per other thread of slot's rank changing a name ev uses: the event
  // number of its next change not yet replayed. Taken before the call is
  // tried, so that a change replayed between the try and the wait is the
  // one waited for, not the change after it (a rename then a removal: the
  // retry would wait for the removal and fail for good).
  using Pending = std::vector<std::pair<int, uint64_t>>;
  Pending pending_changes(int slot, const trace::Event& ev) const;
  // Waits until one of the pending changes is replayed (bounded as above);
  // false when there is none.
  bool wait_for_change(const Pending& pending, const std::atomic<bool>& aborted, int64_t bound_ns) const;
  // Slot's thread has replayed its events up to event_no (the cursor's count).
  void replayed(int slot, uint64_t event_no) {
    progress_[size_t(slot)].value.store(event_no, std::memory_order_release);
  }
  // Slot's thread ended (or stopped): nothing of it is left to wait for.
  void finished(int slot) {
    if (slot >= 0) replayed(slot, UINT64_MAX);
  }
  // Changes of names recorded (for tests).
  size_t changes() const { return changes_; }

 private:
  struct Change {
    int64_t end_ns;
    uint64_t event_no;  // the largest of this and every earlier-ending change of the thread
  };
  struct ThreadChanges {
    int slot;
    std::vector<Change> by_end;
    std::vector<uint64_t> in_order;  // event numbers, as the thread replays them
  };
  struct alignas(64) Progress {
    std::atomic<uint64_t> value{0};
  };
  using Changes = std::vector<ThreadChanges>;
  // The name a rank-local file id stands for; false for none.
  bool key(int32_t rank, int64_t local, uint64_t* out) const;
  static std::string path_key(int32_t rank, const std::string& path);
  void note(int32_t rank, int slot, int64_t file, const trace::Event& ev, uint64_t event_no);
  void names_of(int32_t rank, const trace::Event& ev, std::vector<const Changes*>& out) const;
  bool satisfied(int slot, const Changes& changes, int64_t start_ns) const;
  bool next_changes(int slot, const Changes& changes, Pending& out) const;

  const trace::Plan& plan_;
  std::vector<int> slots_;
  std::vector<int32_t> slot_rank_;
  std::vector<bool> slot_exact_;  // the slot's stream keeps every time (lossless)
  std::unordered_map<uint64_t, Changes> by_name_;
  std::unordered_map<std::string, uint64_t> changed_paths_;  // "rank:path" of every name in by_name_
  std::unique_ptr<Progress[]> progress_;
  size_t changes_ = 0;
};

}  // namespace mpior::replay
