// Chrome trace-event JSON (what ui.perfetto.dev and chrome://tracing open),
// written as it goes: complete slices ("X", with a duration), flow arrows
// ("s" -> "f", each end bound to the slice enclosing it) and track names.
// Every event is serialised by nlohmann::json; the file is
//   {"traceEvents":[...], "displayTimeUnit":"ns", "metadata":{...}}
// and the metadata says whether the slice cap was hit.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

namespace mpior::report {

// Where a flow end sits: the slice on (pid, tid) that encloses ts_ns.
struct FlowEnd {
  int64_t pid = 0, tid = 0;
  int64_t ts_ns = 0;
};

class TimelineWriter {
 public:
  static constexpr uint64_t kDefaultMaxEvents = 1'000'000;

  TimelineWriter(std::ostream& out, uint64_t max_slices);
  TimelineWriter(const TimelineWriter&) = delete;
  TimelineWriter& operator=(const TimelineWriter&) = delete;

  // Track names ("M" events); sort_index orders processes in the viewer.
  void process(int64_t pid, const std::string& name, int64_t sort_index);
  void thread(int64_t pid, int64_t tid, const std::string& name);
  // False (and nothing written) once max_slices slices were written.
  bool slice(const FlowEnd& at, int64_t dur_ns, const std::string& name, const char* cat, nlohmann::json args);
  // One arrow from `from` to `to`; ids are unique per writer.
  void flow(const FlowEnd& from, const FlowEnd& to, const std::string& name, const char* cat);
  // Notes that slices were left out by the cap (the caller's own budgets).
  void mark_capped() { capped_ = true; }
  bool full() const { return slices_ >= max_slices_; }

  uint64_t slices() const { return slices_; }
  uint64_t flows() const { return flows_; }
  // Closes the array and writes the metadata (plus capped, max_events,
  // slices, flows). Returns false when the stream failed.
  bool finish(nlohmann::json metadata);

 private:
  void emit(const nlohmann::json& ev);

  std::ostream& out_;
  uint64_t max_slices_;
  uint64_t slices_ = 0, flows_ = 0;
  bool first_ = true, capped_ = false;
};

// Trace-event timestamps are microseconds.
inline double trace_us(int64_t ns) { return double(ns) / 1e3; }

}  // namespace mpior::report
