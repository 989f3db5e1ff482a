#include "call_residual.hpp"

#include <algorithm>
#include <cstdint>

#include "call.hpp"
#include "log.hpp"

namespace mpior::preload {

namespace {

constexpr int kRounds = 5;
constexpr int kCalls = 200;

// One round: ticks per call outside both readings, its own duration and the
// time the wrapper already hands on (tracer_ticks) taken off.
int64_t one_round(ThreadState& t) noexcept {
  t.tracer_ticks = 0;
  int64_t inside = 0;
  int64_t t0 = clock::now();
  for (int i = 0; i < kCalls; ++i) {
    Call c(trace::Kind::write);
    c.stop();
    inside += c.ev().end - c.ev().start;
    c.drop();
  }
  int64_t elapsed = clock::now() - t0;
  return (elapsed - t.tracer_ticks - inside) / kCalls;
}

}  // namespace

void measure_call_residual() noexcept {
  ThreadState& t = t_state;
  if (t.depth || !g_recording.load(std::memory_order_relaxed)) return;
  ThreadState saved = t;
  t.in_tracer = 0;  // the session starts under the tracer's guard; the loop calls nothing intercepted
  int64_t least = INT64_MAX;
  for (int r = 0; r < kRounds; ++r) least = std::min(least, one_round(t));
  t = saved;
  g_call_residual_ticks = std::max<int64_t>(0, least);
  // In ticks: converting to ns would wait for the TSC's measurement here, at load.
  log_debug("tracer: {} {} a call outside its clock readings, left out of the computation", g_call_residual_ticks,
            clock::g_use_tsc ? "TSC ticks" : "ns");
}

}  // namespace mpior::preload
