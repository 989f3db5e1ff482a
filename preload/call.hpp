// One intercepted call in flight. Every generated wrapper makes one first:
// it decides whether to record (not inside the tracer, recording on), counts
// the nesting depth, takes the timestamps, and on destruction hands the record
// to the thread's recorder and restores the errno the real call left.
#pragma once

#include <algorithm>
#include <cerrno>

#include "preload/crash.hpp"
#include "preload/stolen_time.hpp"
#include "preload/thread_state.hpp"
#include "preload/trace_clock.hpp"
#include "trace/event.hpp"

namespace mpior::preload {

// Hands a finished record to the calling thread's recorder (recorder.cpp).
void record_event(trace::RawEvent& ev) noexcept;
// Records a signal handler's calls stashed on this thread, after the call
// that just ended at `depth` (signals.cpp).
void drain_signal_records(uint8_t depth) noexcept;
void count_excluded(trace::Kind k) noexcept;  // recorder.cpp
// A call of a signal handler inside the tracer not recorded (signal_stash.cpp).
void lost_in_handler(trace::Kind k) noexcept;

class Call {
 public:
  // signal_safe: the call's handler takes no lock, so a signal handler that
  // interrupted the tracer records it too (in_tracer == kInTracerSignal).
  __attribute__((always_inline)) explicit Call(trace::Kind k, bool signal_safe = false) noexcept {
    ThreadState& t = t_state;
    prev_tracer_ = t.in_tracer;
    active_ = !(signal_safe ? t.in_tracer & 1 : t.in_tracer) && g_recording.load(std::memory_order_relaxed);
    if (!active_) {
      if (__builtin_expect(t.in_tracer == kInTracerSignal, 0)) lost_in_handler(k);
      return;
    }
    ev_.kind = k;
    ev_.depth = t.depth;
    if (t.depth < 255) ++t.depth;
    ev_.callsite = reinterpret_cast<uint64_t>(__builtin_return_address(0));
    if (ev_.depth == 0) {  // the tracer's time since the last call returned is not the program's
      ev_.tracer = t.tracer_ticks + g_call_residual_ticks;
      t.tracer_ticks = 0;
      t.nested_ticks = 0;
    }
    ev_.start = clock::now() - t.nested_ticks;
    if (ev_.depth == 0 && __builtin_expect(ev_.start - t.last_end - ev_.tracer >= g_gap_check_ticks, 0))
      after_long_gap(t);
  }

  // A signal handler's call whose handler runs later (signal_stash.cpp):
  // the record as the call left it; the destructor does nothing.
  Call(const trace::RawEvent& ev, int saved_errno) noexcept
      : active_(false), prev_tracer_(0), errno_(saved_errno), ev_(ev) {}

  bool active() const noexcept { return active_; }

  // The handler's own work before the real call (pruning's bookkeeping, an
  // auxiliary message posted) is the tracer's time, not the call's: the call
  // starts again here and that work joins the time left out of the gap before
  // it. Else it lands in the call's duration, and where the call is pruned in
  // the computation the replay reproduces (a pruned MPI_Bcast on a
  // one-member communicator would replay many times its own cost).
  // A nested call's start stays: its handler's work is the tracer's time
  // inside the depth-0 call, whose clock (now less nested_ticks) stood still
  // at that start meanwhile.
  __attribute__((always_inline)) void restart() noexcept {
    int64_t now = clock::now();
    if (ev_.depth != 0) {
      t_state.nested_ticks = now - ev_.start;
      return;
    }
    ev_.tracer += now - ev_.start;
    ev_.start = now;
  }

  // After the real call: end time, errno; from here on the thread runs
  // tracer code, so what the handler calls is not recorded. Times within a
  // depth-0 call leave out the tracer's time in the calls nested in it (an
  // MPI-IO call's POSIX calls recorded are the tracer's, not the call's):
  // its end moves back by that much, and the destructor counts it as the
  // tracer's after the call, left out of the next gap. A depth-0 call with
  // none also leaves out its clock readings' own time (g_call_inside_ticks:
  // a loop of small calls adds up), which a nested call keeps so that it
  // still ends within its parent.
  __attribute__((always_inline)) void stop() noexcept {
    ThreadState& t = t_state;
    int64_t end = clock::now() - t.nested_ticks;
    if (ev_.depth == 0 && t.nested_ticks == 0) end = std::max(ev_.start, end - g_call_inside_ticks);
    ev_.end = end;
    errno_ = thread_errno();
    t.in_tracer = 1;
  }

  trace::RawEvent& ev() noexcept { return ev_; }
  const trace::RawEvent& ev() const noexcept { return ev_; }
  int saved_errno() const noexcept { return errno_; }
  // Records errno when the call failed.
  void failed_if(bool failed) noexcept { ev_.err = failed ? errno_ : 0; }
  // The handler decided this call is not traced (excluded path, not a file).
  void drop() noexcept { dropped_ = true; }
  bool dropped() const noexcept { return dropped_; }
  // Not traced because it names an excluded path: counted per kind.
  void drop_excluded() noexcept {
    dropped_ = true;
    count_excluded(ev_.kind);
  }
  // A prepare hook looked the call's file up before the real call (close:
  // the fd names no file after it); the file slot holds what it found.
  void mark_looked_up() noexcept { looked_up_ = true; }
  bool looked_up() const noexcept { return looked_up_; }
  // The handler took its fast way, which costs about the same at every
  // call: the time after the call's end may be estimated (after_end).
  void mark_fast() noexcept { fast_ = true; }
  static constexpr uint8_t kSampleEvery = 64;  // (after_end)

  // hot: out of line, next to record_event and record_now (recorder.cpp) in
  // the library's code, so that the path after a system call spans few pages.
  __attribute__((hot)) ~Call() {
    if (!active_) return;
    if (!dropped_) record_event(ev_);
    ThreadState& t = t_state;
    if (ev_.depth == 0 && ev_.end != 0) {
      if (__builtin_expect(ev_.end - ev_.start >= g_stolen_check_ticks, 0) && !prev_tracer_) {
        t.slow_path = 1;
        stolen::reading_after_call(!dropped_, ev_.end - ev_.start);
      }
      // A flush from this thread (crash.hpp) is the tracer's time after the call.
      if (__builtin_expect(ev_.end >= crash::g_due.load(std::memory_order_relaxed), 0) && !prev_tracer_) {
        t.slow_path = 1;
        crash::due();
      }
      // A dropped call's tracer time passes on to the next record, which
      // holds its span; the gap before the next call (pruning's rule) is
      // from this end, so its end moves back by as much: the next call
      // subtracts it again.
      const int64_t handed_on = dropped_ ? ev_.tracer : 0;
      t.tracer_ticks += after_end(t) + handed_on;
      t.last_end = ev_.end - handed_on;
    } else if (ev_.end != 0) {
      // Recording a nested call is the tracer's time inside its depth-0 call:
      // that call's clock stood still at this one's end meanwhile (no
      // residual added, so every nested call ends within its parent).
      t.nested_ticks = clock::now() - ev_.end;
    }
    if (t.depth) --t.depth;
    if (__builtin_expect(t.stashed, 0) && !t.signal_stash) drain_signal_records(t.depth);
    t.in_tracer = prev_tracer_;
    thread_errno() = errno_;
    if (__builtin_expect(crash::g_pending_signal.load(std::memory_order_relaxed) != 0, 0)) crash::raise_pending();
  }

  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

 private:
  // Either rule's threshold passed: the wait for a CPU leaves the gap, then
  // pruning's rule weighs the gap less its own wait (not that of pruned
  // calls before it, which their ends read).
  __attribute__((noinline)) void after_long_gap(ThreadState& t) noexcept {
    if (prev_tracer_) return;  // a signal handler's call inside the tracer: its gap is not the program's
    int64_t gap = ev_.start - t.last_end - ev_.tracer, own = gap;
    if (gap >= g_stolen_check_ticks) own = gap - stolen::leave_out_of_gap(ev_, gap);
    if (own >= g_long_gap_ticks) t.long_gap = 1;
  }

  // The tracer's time since a depth-0 call's end. A clock reading is among
  // the dearest instructions of a traced call: a fast call (mark_fast) on
  // the usual way (no slow_path) reads it at one call in kSampleEvery only
  // and counts what those readings learnt for the others.
  __attribute__((always_inline)) int64_t after_end(ThreadState& t) noexcept {
    if (__builtin_expect(fast_ & !t.slow_path & (t.after_countdown != 0), 1)) {
      --t.after_countdown;
      return t.after_ticks;
    }
    const int64_t after = clock::now() - ev_.end;
    if (fast_ && !t.slow_path) {  // a sample; one far above the estimate counts as twice it
      t.after_ticks =
          t.after_ticks <= 0 ? after : t.after_ticks + (std::min(after, 2 * t.after_ticks) - t.after_ticks) / 8;
      t.after_countdown = kSampleEvery - 1;
    }
    t.slow_path = 0;
    return after;
  }

  bool active_;
  bool dropped_ = false;
  bool fast_ = false;
  bool looked_up_ = false;  // in the padding before errno_: no larger, one store with dropped_
  uint8_t prev_tracer_;     // 0, or kInTracerSignal in a signal handler that interrupted the tracer
  int errno_ = 0;
  trace::RawEvent ev_;
};

}  // namespace mpior::preload
