#include "postproc/children.hpp"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <optional>
#include <system_error>
#include <tuple>

#include "postproc/restream.hpp"
#include "trace/arg_views.hpp"
#include "trace/builder.hpp"
#include "trace/cursor.hpp"
#include "trace/format.hpp"
#include "trace/tool_error.hpp"

namespace mpior::postproc {
namespace fs = std::filesystem;

namespace {

void append_renumbered(Restream& out, const trace::Stream& s, int32_t rank, int64_t file_base) {
  out.begin(s, rank);
  trace::EventCursor c(s, rank, Restream::cursor_options());
  trace::Event ev;
  while (c.next(ev)) {
    trace::RawEvent r = ev.raw();
    for (int slot : trace::file_slots(r.kind))
      if (r.args[size_t(slot)] >= 0) r.args[size_t(slot)] += file_base;
    out.copy(r);
  }
}

trace::Stream renumbered(const trace::Stream& s, int32_t rank, uint32_t thread, int64_t file_base) {
  Restream out(s.lossless);
  append_renumbered(out, s, rank, file_base);
  return out.finish(rank, thread);
}

// `first` then `next` in one stream: the thread that called exec goes on
// as the exec'd program's first thread.
trace::Stream continued(const trace::Stream& first, const trace::Stream& next, int32_t rank, int64_t file_base) {
  Restream out(first.lossless && next.lossless);
  append_renumbered(out, first, rank, 0);
  append_renumbered(out, next, rank, file_base);
  return out.finish(rank, first.thread);
}

// The first event's start (first = true) or the last event's end of a stream.
int64_t stream_edge(const trace::Stream& s, int32_t rank, bool first) {
  trace::EventCursor c(s, rank, trace::CursorOptions{});
  trace::Event ev;
  int64_t edge = first ? INT64_MAX : INT64_MIN;
  while (c.next(ev)) {
    if (first) return ev.start_ns;
    edge = std::max(edge, ev.end_ns);
  }
  return edge;
}

size_t earliest_stream(const trace::RankTrace& t) {
  size_t best = 0;
  int64_t best_start = INT64_MAX;
  for (size_t i = 0; i < t.streams.size(); ++i) {
    int64_t start = stream_edge(t.streams[i], t.process.rank, true);
    if (start < best_start) best = i, best_start = start;
  }
  return best;
}

uint32_t next_thread(const trace::RankTrace& t) {
  uint32_t next = 0;
  for (const trace::Stream& s : t.streams) next = std::max(next, s.thread + 1);
  return next;
}

}  // namespace

std::vector<size_t> fold_child(trace::RankTrace& parent, const trace::RankTrace& child,
                               std::optional<size_t> continues) {
  int32_t rank = parent.process.rank;
  int64_t file_base = int64_t(parent.files.size());
  uint32_t thread = next_thread(parent);
  size_t continuing = continues && !child.streams.empty() ? earliest_stream(child) : SIZE_MAX;
  std::vector<size_t> added;
  for (size_t i = 0; i < child.streams.size(); ++i) {
    if (i == continuing) {
      parent.streams[*continues] = continued(parent.streams[*continues], child.streams[i], rank, file_base);
      added.push_back(*continues);
    } else {
      added.push_back(parent.streams.size());
      parent.streams.push_back(renumbered(child.streams[i], rank, thread++, file_base));
    }
  }
  parent.files.insert(parent.files.end(), child.files.begin(), child.files.end());
  for (size_t k = 0; k < trace::kNumKinds; ++k) {
    parent.pruned[k].calls += child.pruned[k].calls;
    parent.pruned[k].time_ns += child.pruned[k].time_ns;
    parent.excluded[k].calls += child.excluded[k].calls;
    parent.unrecorded[k].calls += child.unrecorded[k].calls;
  }
  parent.process.end_ns = std::max(parent.process.end_ns, child.process.end_ns);
  parent.process.cpu_wait_ns += child.process.cpu_wait_ns;
  return added;
}

namespace {

struct ChildPart {
  int32_t rank;
  int64_t pid;
  int64_t first_ns;  // its first event (INT64_MAX: none)
  std::string path;
  trace::RankTrace trace;
};

// The stream among `streams` that ran last (the thread that called exec: an
// exec ends every other thread), when it ended before `before`.
std::optional<size_t> exec_caller(const trace::RankTrace& t, const std::vector<size_t>& streams, int64_t before) {
  std::optional<size_t> caller;
  int64_t last = INT64_MIN;
  for (size_t i : streams) {
    int64_t end = stream_edge(t.streams[i], t.process.rank, false);
    if (end > last) caller = i, last = end;
  }
  if (caller && last > before) return std::nullopt;
  return caller;
}

bool belongs(const ChildPart& part, TraceSet& set) {
  const trace::ProcessInfo& p = part.trace.process;
  if (p.job_id == set.job.job_id && part.rank < set.size() && p.rank == part.rank) return true;
  set.warnings.push_back(part.path + ": a process of job " + job_id_text(p.job_id) + ", rank " +
                         std::to_string(p.rank) + " (this is job " + job_id_text(set.job.job_id) + "); left out");
  return false;
}

}  // namespace

size_t fold_children(TraceSet& set) {
  std::vector<ChildPart> parts;
  std::error_code ec;
  for (fs::directory_iterator it(set.dir, ec), end; !ec && it != end; it.increment(ec)) {
    int32_t rank = -1;
    int64_t pid = 0;
    if (trace::child_from_file_name(it->path().filename().string(), &rank, &pid))
      parts.push_back({rank, pid, INT64_MAX, it->path().string(), {}});
  }
  if (ec) throw ToolError(set.dir + ": cannot list: " + ec.message());
  for (ChildPart& part : parts) {
    part.trace = trace::read_rank_trace(part.path);
    if (!part.trace.streams.empty())
      part.first_ns = stream_edge(part.trace.streams[earliest_stream(part.trace)], part.rank, true);
  }
  // A process that called exec left two traces under one pid, the program
  // before the exec and the one after: in the order they ran, the second
  // continues the thread that called exec, so the replay runs it after.
  std::sort(parts.begin(), parts.end(), [](const ChildPart& a, const ChildPart& b) {
    return std::tie(a.rank, a.pid, a.first_ns, a.path) < std::tie(b.rank, b.pid, b.first_ns, b.path);
  });
  size_t folded = 0;
  const ChildPart* previous = nullptr;
  std::vector<size_t> previous_streams;
  for (const ChildPart& part : parts) {
    if (!belongs(part, set)) continue;
    if (!part.trace.process.finished)
      set.warnings.push_back(part.path + ": process " + std::to_string(part.pid) + " (" + part.trace.process.cmdline +
                             ") ended before its trace was complete");
    trace::RankTrace& rank = set.ranks[size_t(part.rank)];
    std::optional<size_t> continues;
    if (previous && previous->rank == part.rank && previous->pid == part.pid && previous->trace.process.finished)
      continues = exec_caller(rank, previous_streams, part.first_ns);
    previous_streams = fold_child(rank, part.trace, continues);
    previous = &part;
    ++folded;
  }
  return folded;
}

}  // namespace mpior::postproc
