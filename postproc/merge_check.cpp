#include "postproc/merge_check.hpp"

#include <fmt/format.h>

#include <map>
#include <utility>

#include "trace/cursor.hpp"
#include "trace/format.hpp"
#include "trace/text.hpp"
#include "trace/tool_error.hpp"

namespace mpior::postproc {

namespace {

std::string field(const char* name, int64_t got, int64_t want) {
  return got == want ? std::string() : fmt::format("{} is {}, want {}", name, got, want);
}

// What differs between an event read from the plan (got) and from the trace.
std::string event_difference(const trace::Event& got, const trace::Event& want, bool timing) {
  if (got.kind != want.kind) return fmt::format("kind is {}, want {}", trace::name(got.kind), trace::name(want.kind));
  std::string d = field("depth", got.depth, want.depth);
  if (d.empty()) d = field("flags", got.flags, want.flags);
  if (d.empty()) d = field("thread", got.thread, want.thread);
  if (d.empty()) d = field("rank", got.rank, want.rank);
  if (d.empty()) d = field("position", got.leaf, want.leaf);
  if (d.empty()) d = field("call site", int64_t(got.callsite), int64_t(want.callsite));
  for (int i = 0; d.empty() && i < trace::kNumArgs; ++i)
    d = field(trace::arg_name(want.kind, i), got.args[size_t(i)], want.args[size_t(i)]);
  if (d.empty()) d = field("ret", got.ret, want.ret);
  if (d.empty()) d = field("errno", got.err, want.err);
  if (!timing) return d;
  if (d.empty()) d = field("gap", got.gap_ns, want.gap_ns);
  if (d.empty()) d = field("duration", got.dur_ns, want.dur_ns);
  if (d.empty()) d = field("start", got.start_ns, want.start_ns);
  if (d.empty()) d = field("end", got.end_ns, want.end_ns);
  return d;
}

}  // namespace

std::string first_difference(const trace::Stream& own, const trace::Stream& merged, int32_t rank, uint64_t* events) {
  if (own.lossless != merged.lossless) return "lossless timing differs";
  trace::EventCursor want_cursor(own, rank), got_cursor(merged, rank);
  trace::Event want, got;
  uint64_t n = 0;
  for (;; ++n) {
    bool have_want = want_cursor.next(want), have_got = got_cursor.next(got);
    if (!have_want && !have_got) break;
    if (!have_got) return fmt::format("ends after {} events, the trace goes on with {}", n, trace::name(want.kind));
    if (!have_want) return fmt::format("goes on with {} after the trace's {} events", trace::name(got.kind), n);
    std::string d = event_difference(got, want, own.lossless);
    if (!d.empty()) return fmt::format("event {} ({}): {}", n, trace::name(want.kind), d);
  }
  if (events) *events = n;
  return {};
}

uint64_t check_plan(const TraceSet& set, const trace::Plan& plan, const std::string& plan_name) {
  std::map<std::pair<int64_t, uint32_t>, size_t> stream_of;  // (rank, thread) -> plan stream
  for (size_t i = 0; i < plan.streams.size(); ++i) {
    for (int64_t r : plan.streams[i].rank_list()) {
      auto [it, fresh] = stream_of.emplace(std::pair{r, plan.streams[i].thread}, i);
      if (!fresh)
        throw ToolError(fmt::format("{}: streams {} and {} both stand for rank {} thread {}", plan_name, it->second, i,
                                    r, plan.streams[i].thread));
    }
  }
  uint64_t total = 0;
  for (int32_t r = 0; r < set.size(); ++r) {
    for (const trace::Stream& own : set.ranks[size_t(r)].streams) {
      auto it = stream_of.find({r, own.thread});
      if (it == stream_of.end())
        throw ToolError(fmt::format("{}: no stream for rank {} thread {} ({})", plan_name, r, own.thread, set.path(r)));
      uint64_t events = 0;
      std::string d = first_difference(own, plan.streams[it->second], r, &events);
      if (!d.empty())
        throw ToolError(fmt::format("{}: stream {} read for rank {} thread {} differs from {}: {}", plan_name,
                                    it->second, r, own.thread, set.path(r), d));
      total += events;
      stream_of.erase(it);
    }
  }
  if (!stream_of.empty()) {
    auto [key, i] = *stream_of.begin();
    throw ToolError(fmt::format("{}: stream {} stands for rank {} thread {}, which has no trace stream", plan_name, i,
                                key.first, key.second));
  }
  return total;
}

uint64_t check_encoded_plan(const TraceSet& set, const trace::Plan& plan, const std::string& plan_name) {
  return check_plan(set, trace::decode_plan(trace::encode(plan), plan_name), plan_name);
}

}  // namespace mpior::postproc
