#include "postproc/journal_recover.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "trace/builder.hpp"
#include "trace/codec.hpp"
#include "trace/format.hpp"
#include "trace/journal_format.hpp"
#include "trace/spill_reader.hpp"

namespace mpior::postproc {
namespace {

// Table entries made after the rank file was written, in id order.
void add_entries(trace::RankTrace& t, const trace::JournalMeta& meta) {
  for (const auto& [id, f] : meta.files)
    if (size_t(id) == t.files.size()) t.files.push_back(f);
  for (const trace::CommEntry& c : meta.comms)
    if (size_t(c.id) == t.comms.size()) t.comms.push_back(c);
}

// The rank's timing mode (MPIOR_TIMING), which the recovered events must
// be folded with: the thread's stream in the rank file says it, or any
// other stream of the rank (every thread of a rank traces alike).
bool lossless(const trace::RankTrace& t, std::vector<trace::Stream>::const_iterator own) {
  if (own != t.streams.end()) return own->lossless;
  return std::any_of(t.streams.begin(), t.streams.end(), [](const trace::Stream& s) { return s.lossless; });
}

// The journal's events folded into the thread's stream (a new one if the
// rank file has none for it); how many.
size_t add_events(trace::RankTrace& t, const trace::JournalThread& j) {
  if (j.events.empty()) return 0;
  auto it =
      std::find_if(t.streams.begin(), t.streams.end(), [&](const trace::Stream& x) { return x.thread == j.thread; });
  trace::StreamBuilder b(trace::BuilderOptions{.lossless = lossless(t, it)});
  // The first recovered events' gaps: from the rank file's last events, on
  // the journal's clock; when the ring no longer holds those, unknown (0),
  // not the time since the trace's start.
  for (const trace::RawEvent& ev : j.before) b.continue_after(ev);
  if (j.before.empty()) {
    trace::RawEvent first = j.events.front();
    first.depth = 0;
    first.end = first.start;
    b.continue_after(first);
  }
  for (const trace::RawEvent& ev : j.events) b.append(ev);
  trace::Stream s = b.snapshot(t.process.rank, j.thread);
  if (it == t.streams.end())
    t.streams.push_back(std::move(s));
  else
    trace::append_stream(*it, s);
  t.process.end_ns = std::max(t.process.end_ns, j.events.back().end);
  return j.events.size();
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// A journaled trace file of dir: a rank's or a child process's of a rank.
struct Journaled {
  std::string name;
  int32_t rank = -1;
  bool child = false;
};

// The trace file `j` names with the journals' records folded in; they go.
void recover_trace(const std::string& dir, const Journaled& j, const std::vector<std::string>& files,
                   std::vector<std::string>* warnings) {
  const std::string path = dir + "/" + j.name;
  const std::string who = (j.child ? "a child process of rank " : "rank ") + std::to_string(j.rank);
  const bool written = exists(path);
  trace::RankTrace t;
  if (written) t = j.child ? trace::read_rank_trace(path) : trace::read_rank_trace_with_spill(dir, j.rank, warnings);
  std::vector<trace::JournalThread> threads;
  trace::JournalMeta meta;
  const std::string meta_path = dir + "/" + trace::journal_meta_name(j.name);
  const std::string shared_path = dir + "/" + trace::journal_shared_name(j.name);
  for (const std::string& f : files) {
    if (f == meta_path) {
      meta = trace::read_meta_journal(f, warnings);
    } else if (f == shared_path) {
      for (trace::JournalThread& jt : trace::read_shared_journal(f, warnings, t.journaled))
        threads.push_back(std::move(jt));
    } else {
      threads.push_back(trace::read_thread_journal(f, warnings, t.journaled));
    }
  }
  size_t events = 0;
  for (const trace::JournalThread& t : threads) events += t.events.size();
  if (events > 0 && !written) {
    warnings->push_back(path + ": missing; the journal of " + who + " cannot be recovered without it");
    return;
  }
  if (events > 0) {
    t.spill_segments = 0;  // the spill file's segments are in the streams now
    add_entries(t, meta);
    std::sort(threads.begin(), threads.end(), [](auto& a, auto& b) { return a.thread < b.thread; });
    for (const trace::JournalThread& jt : threads) add_events(t, jt);
    trace::write_file_atomic(path, trace::encode(t));
    warnings->push_back(who + ": " + std::to_string(events) + " events recovered from its crash journal into " + path);
  }
  for (const std::string& f : files) ::unlink(f.c_str());
}

}  // namespace

void recover_journals(const std::string& dir, int32_t size, std::vector<std::string>* warnings) {
  for (const std::string& name : trace::journaled_traces(dir)) {
    Journaled j{name, trace::rank_from_file_name(name), false};
    int64_t pid = 0;
    if (j.rank < 0) j.child = trace::child_from_file_name(name, &j.rank, &pid);
    if (j.rank < 0 || j.rank >= size) {
      warnings->push_back(dir + "/" + name + ": journals of no rank of this job (" + std::to_string(size) +
                          " ranks); left in place");
      continue;
    }
    try {
      recover_trace(dir, j, trace::journal_files(dir, name), warnings);
    } catch (const std::exception& e) {
      warnings->push_back(std::string(e.what()) + " (the crash journal of " + name + " left in place)");
    }
  }
}

}  // namespace mpior::postproc
