#include "trace/journal_format.hpp"

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "trace/codec.hpp"
#include "trace/format.hpp"
#include "trace/format_body.hpp"

namespace mpior::trace {

namespace {

constexpr std::string_view kTraceSuffix = ".mpior", kJournalSuffix = ".journal", kMetaTail = "meta.journal",
                           kSharedTail = "shared.journal";

std::string_view stem_of(std::string_view trace_name) {
  if (trace_name.ends_with(kTraceSuffix)) trace_name.remove_suffix(kTraceSuffix.size());
  return trace_name;
}

// The part of a journal's name after its trace's stem and a dot: "meta.journal" or "tNNNN.journal".
bool journal_tail(std::string_view tail) {
  if (tail == kMetaTail || tail == kSharedTail) return true;
  if (!tail.starts_with('t') || !tail.ends_with(kJournalSuffix)) return false;
  std::string_view digits = tail.substr(1, tail.size() - 1 - kJournalSuffix.size());
  return !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::string journal_file_name(const std::string& trace_name, uint32_t thread) {
  char buf[24];
  std::snprintf(buf, sizeof buf, ".t%04u.journal", thread);
  return std::string(stem_of(trace_name)) + buf;
}

std::string journal_meta_name(const std::string& trace_name) {
  return std::string(stem_of(trace_name)) + "." + std::string(kMetaTail);
}

std::string journal_shared_name(const std::string& trace_name) {
  return std::string(stem_of(trace_name)) + "." + std::string(kSharedTail);
}

std::vector<std::string> journal_files(const std::string& dir, const std::string& trace_name) {
  const std::string prefix = std::string(stem_of(trace_name)) + ".";
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string_view n = e->d_name;
    if (n.starts_with(prefix) && journal_tail(n.substr(prefix.size()))) out.push_back(dir + "/" + std::string(n));
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> journaled_traces(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string_view n = e->d_name;
    const size_t dot = n.ends_with(kJournalSuffix) ? n.rfind('.', n.size() - kJournalSuffix.size() - 1) : n.npos;
    if (dot != n.npos && dot > 0 && journal_tail(n.substr(dot + 1)))
      out.push_back(std::string(n.substr(0, dot)) + std::string(kTraceSuffix));
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

JournalHeader read_header(const std::vector<uint8_t>& bytes, const std::string& path) {
  JournalHeader h;
  if (bytes.size() < kJournalHeaderBytes) throw FormatError(path + ": truncated journal header");
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.magic != kJournalMagic) throw FormatError(path + ": not an mpior journal");
  if (h.version != kJournalVersion) throw FormatError(path + ": journal version " + std::to_string(h.version));
  if (h.kinds != kinds_fingerprint()) throw FormatError(path + ": written by an mpior with other event kinds");
  const size_t first = h.thread == kJournalShared ? kJournalSharedRecords : kJournalHeaderBytes;
  if (h.record_size != sizeof(JournalRecord) || h.capacity == 0 ||
      bytes.size() < first + h.capacity * sizeof(JournalRecord))
    throw FormatError(path + ": journal layout does not match its size");
  return h;
}

// A record's times from clock ticks to ns since trace start.
RawEvent in_ns(RawEvent ev, const JournalHeader& h) {
  ev.start = h.zero_ns + int64_t(double(ev.start) * h.ns_per_tick);
  ev.end = h.zero_ns + int64_t(double(ev.end) * h.ns_per_tick);
  ev.tracer = int64_t(double(ev.tracer) * h.ns_per_tick);
  return ev;
}

// One thread's whole records, by event number.
using Whole = std::vector<std::pair<uint64_t, const JournalRecord*>>;

// The records just before the flush mark, back to the last one at depth 0
// (what every depth's gap is measured from), oldest first; none when the
// ring no longer holds them all.
std::vector<RawEvent> before_mark(const Whole& recs, uint64_t flushed, const JournalHeader& h) {
  std::vector<RawEvent> out;
  auto at = std::lower_bound(recs.begin(), recs.end(), std::make_pair(flushed, (const JournalRecord*)nullptr));
  for (uint64_t k = 1; k <= std::min<uint64_t>(flushed, 256); ++k) {
    if (at == recs.begin() || (--at)->first != flushed - k) return {};
    out.insert(out.begin(), in_ns(at->second->ev, h));
    if (at->second->ev.depth == 0) return out;
  }
  return {};
}

// The thread's records from its flush mark on (the journal's, or the trace
// file's when ahead), and the ones before it.
JournalThread thread_of(const std::string& path, const JournalHeader& h, uint32_t thread, uint64_t flushed, Whole& recs,
                        std::span<const JournalMark> marks, std::vector<std::string>* warnings) {
  for (const JournalMark& m : marks)
    if (m.thread == thread) flushed = std::max(flushed, m.events);
  std::sort(recs.begin(), recs.end());
  JournalThread out{thread, h.rank, flushed, {}, before_mark(recs, flushed, h)};
  uint64_t expect = flushed;
  for (auto at = std::lower_bound(recs.begin(), recs.end(), std::make_pair(flushed, (const JournalRecord*)nullptr));
       at != recs.end(); ++at) {
    if (at->first != expect)
      warnings->push_back(path + ": events " + std::to_string(expect) + " to " + std::to_string(at->first - 1) +
                          " of thread " + std::to_string(thread) + " are lost (overwritten or torn)");
    expect = at->first + 1;
    out.events.push_back(in_ns(at->second->ev, h));
  }
  return out;
}

void warn_torn(const std::string& path, uint64_t torn, std::vector<std::string>* warnings) {
  if (torn)
    warnings->push_back(path + ": " + std::to_string(torn) + " torn record(s) dropped (the process died writing it)");
}

}  // namespace

JournalThread read_thread_journal(const std::string& path, std::vector<std::string>* warnings,
                                  std::span<const JournalMark> marks) {
  std::vector<uint8_t> bytes = read_file(path);
  JournalHeader h = read_header(bytes, path);
  if (h.thread == kJournalShared) throw FormatError(path + ": a shared journal where a thread's was expected");
  std::vector<JournalRecord> recs(h.capacity);
  std::memcpy(recs.data(), bytes.data() + kJournalHeaderBytes, h.capacity * sizeof(JournalRecord));
  Whole whole;
  uint64_t torn = 0;
  for (const JournalRecord& r : recs) {
    if (r.commit == 0 && r.opened == 0) continue;  // never written
    const uint64_t seq = r.opened - 1;
    if (r.opened == 0 || !journal_whole(r, seq) || seq % h.capacity != uint64_t(&r - recs.data()))
      ++torn;
    else
      whole.emplace_back(seq, &r);
  }
  warn_torn(path, torn, warnings);
  return thread_of(path, h, h.thread, h.flushed, whole, marks, warnings);
}

std::vector<JournalThread> read_shared_journal(const std::string& path, std::vector<std::string>* warnings,
                                               std::span<const JournalMark> marks) {
  std::vector<uint8_t> bytes = read_file(path);
  JournalHeader h = read_header(bytes, path);
  if (h.thread != kJournalShared) throw FormatError(path + ": a thread's journal where the shared one was expected");
  std::vector<uint64_t> flushed(kJournalThreads);
  std::memcpy(flushed.data(), bytes.data() + kJournalHeaderBytes, kJournalThreads * sizeof(uint64_t));
  std::vector<JournalRecord> recs(h.capacity);
  std::memcpy(recs.data(), bytes.data() + kJournalSharedRecords, h.capacity * sizeof(JournalRecord));
  std::vector<Whole> by_thread(kJournalThreads);
  uint64_t torn = 0;
  for (const JournalRecord& r : recs) {
    if (r.commit == 0 && r.opened == 0) continue;  // never written
    const uint64_t thread = r.opened >> kJournalThreadShift, seq = (r.opened & ((1ull << kJournalThreadShift) - 1)) - 1;
    if (r.opened != r.commit || thread >= kJournalThreads || seq + 1 == 0)
      ++torn;
    else
      by_thread[thread].emplace_back(seq, &r);
  }
  warn_torn(path, torn, warnings);
  std::vector<JournalThread> out;
  for (uint32_t t = 0; t < kJournalThreads; ++t)
    if (!by_thread[t].empty()) out.push_back(thread_of(path, h, t, flushed[t], by_thread[t], marks, warnings));
  return out;
}

std::vector<uint8_t> journal_file_frame(int32_t id, const FileEntry& f) {
  Encoder e;
  e.u8(1);
  e.sv(id);
  body::put_file(e, f);
  return e.bytes();
}

std::vector<uint8_t> journal_comm_frame(const CommEntry& c) {
  Encoder e;
  e.u8(2);
  body::put_comm(e, c);
  return e.bytes();
}

namespace {

void read_frame(std::span<const uint8_t> payload, const std::string& path, JournalMeta& out) {
  Decoder d(payload, path);
  uint8_t type = d.u8();
  if (type == 1) {
    int32_t id = int32_t(d.sv());
    out.files.emplace_back(id, body::get_file(d));
  } else if (type == 2) {
    out.comms.push_back(body::get_comm(d));
  } else {
    d.fail("unknown journal entry type " + std::to_string(type));
  }
}

}  // namespace

JournalMeta read_meta_journal(const std::string& path, std::vector<std::string>* warnings) {
  std::vector<uint8_t> bytes = read_file(path);
  JournalMeta out;
  size_t pos = 0;
  while (pos + 8 <= bytes.size()) {
    uint32_t len, crc;
    std::memcpy(&len, bytes.data() + pos, 4);
    std::memcpy(&crc, bytes.data() + pos + 4, 4);
    if (len == 0) break;  // the mapped file's unused tail, or a frame whose length was never written
    std::span<const uint8_t> payload(bytes.data() + pos + 8, std::min<size_t>(len, bytes.size() - pos - 8));
    if (payload.size() != len || crc32c(payload) != crc) break;
    try {
      read_frame(payload, path, out);
    } catch (const FormatError& e) {
      warnings->push_back(e.what());
      return out;
    }
    pos += 8 + len;
  }
  if (std::any_of(bytes.begin() + std::ptrdiff_t(pos), bytes.end(), [](uint8_t b) { return b != 0; }))
    warnings->push_back(path + ": a torn entry at byte " + std::to_string(pos) +
                        " dropped (the process died writing it)");
  return out;
}

}  // namespace mpior::trace
