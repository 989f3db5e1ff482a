#include "preload/call_residual.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "preload/call.hpp"
#include "preload/log.hpp"
#include "preload/real_table.hpp"

namespace mpior::preload {

namespace {

constexpr int kRounds = 5;
constexpr int kWrappedRounds = 7;
constexpr int kCalls = 200;

// One round of calls made inline: ticks per call outside both readings (its
// own duration and the time the wrapper already hands on, tracer_ticks,
// taken off), and in `inside` the ticks between them.
int64_t inline_round(ThreadState& t, int64_t& inside) noexcept {
  t.tracer_ticks = 0;
  inside = 0;
  int64_t t0 = clock::now();
  for (int i = 0; i < kCalls; ++i) {
    Call c(trace::Kind::write);
    c.stop();
    inside += c.ev().end - c.ev().start;
    c.drop();
  }
  int64_t elapsed = clock::now() - t0;
  inside /= kCalls;
  return (elapsed - t.tracer_ticks) / kCalls - inside;
}

// One round through the wrapper a program calls, symbol lookup and all:
// ftell on a memory stream the tracer does not trace (the call is dropped)
// against the real ftell. Ticks per call that the accounting leaves in the
// program's time beyond the real call, its clock readings' own included.
int64_t wrapped_round(ThreadState& t, FILE* f) noexcept {
  auto real = real::get_ftell();
  int64_t r0 = clock::now();
  for (int i = 0; i < kCalls; ++i) (void)real(f);
  int64_t untraced = clock::now() - r0;
  t.tracer_ticks = 0;
  int64_t w0 = clock::now();
  for (int i = 0; i < kCalls; ++i) (void)::ftell(f);
  int64_t traced = clock::now() - w0;
  return (traced - untraced - t.tracer_ticks) / kCalls;
}

}  // namespace

CallResidual measure_call_residual() noexcept {
  ThreadState& t = t_state;
  if (t.depth || !g_recording.load(std::memory_order_relaxed)) return {};
  static char text[16] = "mpior";
  FILE* f = fmemopen(text, sizeof text, "r");  // not intercepted: an untraced stream
  ThreadState saved = t;
  // At load, before the tracer's own statics are made: the calls below must
  // not start the crash journal (crash.hpp), though they pay its check.
  const int64_t due = crash::g_due.exchange(crash::kDueNever);
  g_call_inside_ticks = 0;  // measured here: the calls below keep their readings' time
  t.in_tracer = 0;          // the session starts under the tracer's guard; the loops call nothing recorded
  int64_t least = INT64_MAX, inside = INT64_MAX;
  for (int r = 0; r < kRounds; ++r) {
    int64_t in = 0;
    least = std::min(least, inline_round(t, in));
    inside = std::min(inside, in);
  }
  int64_t wrapped[kWrappedRounds] = {};
  for (int64_t& w : wrapped) w = f ? wrapped_round(t, f) : 0;
  t = saved;
  crash::g_due.store(due);
  if (f) fclose(f);
  std::sort(wrapped, wrapped + kWrappedRounds);
  int64_t through = f ? wrapped[kWrappedRounds / 2] - std::max<int64_t>(0, inside) : 0;
  // Through the wrapper a call costs more than inline (its entry and
  // return, the symbol's indirection): where that measured, it counts.
  g_call_residual_ticks = std::max<int64_t>({0, least, through});
  g_call_inside_ticks = std::max<int64_t>(0, inside);
  // In ticks: converting to ns would wait for the TSC's measurement here, at load.
  log_debug("tracer: {} {} a call outside its clock readings ({} inline), {} inside, left out of the computation",
            g_call_residual_ticks, clock::g_use_tsc ? "TSC ticks" : "ns", least, g_call_inside_ticks);
  return {least, through, g_call_inside_ticks};
}

}  // namespace mpior::preload
