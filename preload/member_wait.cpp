#include "preload/member_wait.hpp"

#include <algorithm>
#include <atomic>
#include <limits>

namespace mpior::preload::mpi {

namespace {

// Call sites (return address, and the bytes' bit width: one site may gather
// different sizes), each with its shortest call: the best evidence of what
// a call costs when it does not wait, for any call once did not. A slot
// another site takes over starts again. Relaxed atomics: pruning is off with
// MPI_THREAD_MULTIPLE, so threads take turns.
constexpr unsigned kSlots = 128;
constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
struct Floor {
  std::atomic<uint64_t> key{0};
  std::atomic<int64_t> shortest{kNone};
};
Floor g_floors[kSlots];

uint64_t key_of(const trace::RawEvent& ev) {
  int64_t bytes = ev.args[trace::arg::bytes];
  return ev.callsite ^ (uint64_t(bytes > 0 ? 64 - __builtin_clzll(uint64_t(bytes)) : 0) << 58);
}

// What of a call of `ticks` stays in the computation: all of it when it
// took at most 1.5 times its site's shortest (a cost's own spread), else
// the shortest (the mean of the calls within 1.5 times would keep the
// shorter waits in the computation).
int64_t cost_of(Floor& f, uint64_t key, int64_t ticks) {
  int64_t shortest = f.key.load(std::memory_order_relaxed) == key ? f.shortest.load(std::memory_order_relaxed) : kNone;
  f.key.store(key, std::memory_order_relaxed);
  shortest = std::min(shortest, ticks);
  f.shortest.store(shortest, std::memory_order_relaxed);
  return ticks <= shortest + shortest / 2 ? ticks : shortest;
}

}  // namespace

int64_t leave_out_member_wait(Call& c) noexcept {
  trace::RawEvent& ev = c.ev();
  if (ev.depth != 0 || ev.end <= ev.start) return 0;
  uint64_t key = key_of(ev);
  int64_t ticks = ev.end - ev.start;
  int64_t left_out = ticks - cost_of(g_floors[(key * 0x9E3779B97F4A7C15ull) >> 57], key, ticks);
  ev.end -= left_out;  // Call's destructor counts the time after a dropped call's end as the tracer's
  return left_out;
}

}  // namespace mpior::preload::mpi
