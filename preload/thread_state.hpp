// Per-thread tracer state, in initial-exec TLS so the hot path reads it with
// one fs-relative load, and the process-wide switch that turns recording on.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "preload/hot_data.hpp"

namespace mpior::preload {

class ThreadRecorder;

struct ThreadState {
  // The tracer's own code runs: intercepted calls pass through. 2: a signal
  // handler of the program's interrupted it (signals.cpp): calls whose
  // recording takes no lock are recorded, into the signal stash.
  uint8_t in_tracer;
  uint8_t depth;         // intercepted calls open on this thread
  uint8_t long_gap;      // a depth-0 call followed g_long_gap_ticks of computation since the last pruning decision
  uint8_t signal_stash;  // records go to the signal stash (a handler runs inside the tracer)
  uint8_t stashed;       // records wait in the signal stash
  // The tracer took a slow way since the last depth-0 call ended (a chunk
  // folded, a first use, a flush): that call's time after its end is read.
  uint8_t slow_path;
  uint8_t after_countdown;  // calls left to count after_ticks for before the next reading
  ThreadRecorder* recorder;
  int64_t tracer_ticks;  // the tracer's own time after depth-0 calls, not yet handed to the next one
  int64_t last_end;      // when the last depth-0 call returned (0: none yet): the computation since is the program's
  int64_t nested_ticks;  // the tracer's time inside the open depth-0 call (recording the calls nested in it)
  int64_t after_ticks;   // a fast call's time after its end (Call::after_end), learnt from readings; 0: none yet
  int* errno_at;         // this thread's errno (thread_errno), null until its first call
};

constinit inline thread_local ThreadState t_state
    __attribute__((tls_model("initial-exec"))) = {0, 0, 0, 0, 0, 0, 0, nullptr, 0, 0, 0, 0, nullptr};

// This thread's errno, its address asked of libc once: every traced call
// reads and restores it, and libc's __errno_location is a call through the
// PLT each time.
inline int& thread_errno() noexcept {
  int* p = t_state.errno_at;
  if (__builtin_expect(p == nullptr, 0)) t_state.errno_at = p = &errno;
  return *p;
}

// The calling thread took a slow way (ThreadState::slow_path).
inline void took_slow_path() noexcept { t_state.slow_path = 1; }

// ThreadState::in_tracer while a signal handler runs inside the tracer.
inline constexpr uint8_t kInTracerSignal = 2;

// True between a successful load and the final write; false in excluded
// processes (launchers), in forked children and after the final write.
MPIOR_HOT_EXTERN std::atomic<bool> g_recording;

// The computation before a call that counts as long for pruning
// (MPIOR_PRUNE_GAP_US, prune_gap.cpp); never, until pruning starts.
inline int64_t g_long_gap_ticks = INT64_MAX;

// A computation or call after which the run-queue wait is read
// (MPIOR_STOLEN_CHECK_US, stolen_time.cpp); never, until MPI_Init.
MPIOR_HOT_EXTERN int64_t g_stolen_check_ticks;

// The smaller of the two: one compare on the hot path (set with either).
MPIOR_HOT_EXTERN int64_t g_gap_check_ticks;

// The tracer's time per depth-0 call outside its clock readings
// (call_residual.cpp), left out of the gap before each call; 0 until measured.
MPIOR_HOT_EXTERN int64_t g_call_residual_ticks;
// The ticks between a call's two clock readings that are the readings' own
// (call_residual.cpp): a depth-0 call's duration leaves them out (Call::stop),
// as the tracer's time. 0 until measured.
MPIOR_HOT_EXTERN int64_t g_call_inside_ticks;

// Marks the tracer's own work on this thread: while one exists, intercepted
// calls made by the tracer (its file writes, logging, unwinding, PMPI calls)
// go straight to the real functions and are not recorded.
class TracerGuard {
 public:
  TracerGuard() noexcept : prev_(t_state.in_tracer) { t_state.in_tracer = 1; }
  ~TracerGuard() { t_state.in_tracer = prev_; }
  TracerGuard(const TracerGuard&) = delete;
  TracerGuard& operator=(const TracerGuard&) = delete;

 private:
  uint8_t prev_;
};

}  // namespace mpior::preload
