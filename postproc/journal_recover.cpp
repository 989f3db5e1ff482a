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

void recover_rank(const std::string& dir, int32_t rank, const std::vector<std::string>& files,
                  std::vector<std::string>* warnings) {
  std::vector<trace::JournalThread> threads;
  trace::JournalMeta meta;
  const std::string meta_path = dir + "/" + trace::journal_meta_name(rank);
  size_t events = 0;
  for (const std::string& f : files) {
    if (f == meta_path) {
      meta = trace::read_meta_journal(f, warnings);
      continue;
    }
    threads.push_back(trace::read_thread_journal(f, warnings));
    events += threads.back().events.size();
  }
  const std::string rank_path = dir + "/" + trace::rank_file_name(rank);
  if (events > 0 && !exists(rank_path)) {
    warnings->push_back(rank_path + ": missing; the journal of rank " + std::to_string(rank) +
                        " cannot be recovered without it");
    return;
  }
  if (events > 0) {
    trace::RankTrace t = trace::read_rank_trace_with_spill(dir, rank, warnings);
    t.spill_segments = 0;  // the spill file's segments are in the streams now
    add_entries(t, meta);
    std::sort(threads.begin(), threads.end(), [](auto& a, auto& b) { return a.thread < b.thread; });
    for (const trace::JournalThread& j : threads) add_events(t, j);
    trace::write_file_atomic(rank_path, trace::encode(t));
    warnings->push_back("rank " + std::to_string(rank) + ": " + std::to_string(events) +
                        " events recovered from its crash journal into " + rank_path);
  }
  for (const std::string& f : files) ::unlink(f.c_str());
}

}  // namespace

void recover_journals(const std::string& dir, int32_t size, std::vector<std::string>* warnings) {
  for (int32_t r = 0; r < size; ++r) {
    std::vector<std::string> files = trace::journal_files(dir, r);
    if (files.empty()) continue;
    try {
      recover_rank(dir, r, files, warnings);
    } catch (const std::exception& e) {
      warnings->push_back(std::string(e.what()) + " (rank " + std::to_string(r) + "'s crash journal left in place)");
    }
  }
}

}  // namespace mpior::postproc
