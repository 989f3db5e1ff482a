#include "report/timeline_writer.hpp"

#include <ostream>

namespace mpior::report {

TimelineWriter::TimelineWriter(std::ostream& out, uint64_t max_slices) : out_(out), max_slices_(max_slices) {
  out_ << "{\"traceEvents\":[\n";
}

void TimelineWriter::emit(const nlohmann::json& ev) {
  if (!first_) out_ << ",\n";
  first_ = false;
  out_ << ev.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void TimelineWriter::process(int64_t pid, const std::string& name, int64_t sort_index) {
  emit({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", name}}}});
  emit({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"tid", 0}, {"args", {{"sort_index", sort_index}}}});
}

void TimelineWriter::thread(int64_t pid, int64_t tid, const std::string& name) {
  emit({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
}

bool TimelineWriter::slice(const FlowEnd& at, int64_t dur_ns, const std::string& name, const char* cat,
                           nlohmann::json args) {
  if (full()) {
    capped_ = true;
    return false;
  }
  ++slices_;
  emit({{"ph", "X"},
        {"name", name},
        {"cat", cat},
        {"pid", at.pid},
        {"tid", at.tid},
        {"ts", trace_us(at.ts_ns)},
        {"dur", trace_us(dur_ns < 0 ? 0 : dur_ns)},
        {"args", std::move(args)}});
  return true;
}

void TimelineWriter::flow(const FlowEnd& from, const FlowEnd& to, const std::string& name, const char* cat) {
  uint64_t id = ++flows_;
  emit({{"ph", "s"},
        {"id", id},
        {"name", name},
        {"cat", cat},
        {"pid", from.pid},
        {"tid", from.tid},
        {"ts", trace_us(from.ts_ns)}});
  emit({{"ph", "f"},
        {"bp", "e"},
        {"id", id},
        {"name", name},
        {"cat", cat},
        {"pid", to.pid},
        {"tid", to.tid},
        {"ts", trace_us(to.ts_ns)}});
}

bool TimelineWriter::finish(nlohmann::json metadata) {
  metadata["capped"] = capped_;
  metadata["max_events"] = max_slices_;
  metadata["slices"] = slices_;
  metadata["flows"] = flows_;
  out_ << "\n],\n\"displayTimeUnit\":\"ns\",\n\"metadata\":"
       << metadata.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "}\n";
  out_.flush();
  return bool(out_);
}

}  // namespace mpior::report
