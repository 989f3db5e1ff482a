#include "preload/journal.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "preload/recorder.hpp"
#include "preload/trace_clock.hpp"
#include "trace/cursor.hpp"
#include "trace/format.hpp"

using namespace mpior;
using namespace mpior::preload;

namespace {

// An event whose every word differs from the other events'.
trace::RawEvent event_number(uint64_t n) {
  trace::RawEvent ev;
  ev.kind = trace::Kind::pwrite;
  ev.depth = 0;
  ev.start = int64_t(1000 + 100 * n);
  ev.end = ev.start + 50;
  ev.callsite = 0x40 + n;
  ev.ret = 64;
  for (size_t i = 0; i < ev.args.size(); ++i) ev.args[i] = int64_t(n * 16 + i);
  return ev;
}

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/mpior-journal-test-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

// A thread journal of `capacity` records whose rank file holds the first `flushed` events.
struct JournalImage {
  std::vector<uint8_t> bytes;
  explicit JournalImage(uint64_t capacity, uint64_t flushed)
      : bytes(trace::kJournalHeaderBytes + capacity * sizeof(trace::JournalRecord)) {
    trace::JournalHeader h;
    h.record_size = sizeof(trace::JournalRecord);
    h.kinds = trace::kinds_fingerprint();
    h.capacity = capacity;
    h.flushed = flushed;
    std::memcpy(bytes.data(), &h, sizeof h);
  }
  uint64_t capacity() const { return (bytes.size() - trace::kJournalHeaderBytes) / sizeof(trace::JournalRecord); }
  trace::JournalRecord& slot(uint64_t seq) {
    auto* recs = reinterpret_cast<trace::JournalRecord*>(bytes.data() + trace::kJournalHeaderBytes);
    return recs[seq % capacity()];
  }
  void store(uint64_t seq) { journal::store_record(slot(seq), event_number(seq), seq); }
  // What a death after the opening word and the first `stored` bytes of the event leaves.
  void tear(uint64_t seq, size_t stored) {
    trace::JournalRecord& r = slot(seq);
    r.opened = seq + 1;
    const trace::RawEvent ev = event_number(seq);
    std::memcpy(&r.ev, &ev, stored);
  }
  std::string write(const std::string& dir) const {
    std::string path = dir + "/" + trace::journal_file_name(trace::rank_file_name(3), 0);
    trace::write_file_atomic(path, bytes);
    return path;
  }
};

}  // namespace

TEST_CASE("a record stored into the crash journal is whole, between two words of its number", "[preload][journal]") {
  for (uint64_t seq : {uint64_t(0), uint64_t(1), uint64_t(12345), uint64_t(1) << 40}) {
    trace::JournalRecord rec;
    const trace::RawEvent ev = event_number(seq);
    journal::store_record(rec, ev, seq);
    REQUIRE(rec.opened == seq + 1);
    REQUIRE(rec.commit == seq + 1);
    REQUIRE(trace::journal_whole(rec, seq));
    REQUIRE(!trace::journal_whole(rec, seq + 1));
    REQUIRE(std::memcmp(&rec.ev, &ev, sizeof ev) == 0);
  }
}

TEST_CASE("recovery drops a record torn mid-store, in a fresh slot or over an older record", "[preload][journal]") {
  TempDir dir;
  const size_t stored = GENERATE(size_t(0), size_t(8), size_t(48), sizeof(trace::RawEvent));
  SECTION("the first lap: the slot was never written") {
    JournalImage j(16, 2);
    for (uint64_t s = 0; s < 9; ++s) j.store(s);
    j.tear(9, stored);
    std::vector<std::string> warnings;
    trace::JournalThread t = trace::read_thread_journal(j.write(dir.path), &warnings);
    REQUIRE(t.events.size() == 7);  // 2 to 8
    REQUIRE(t.events.front().start == event_number(2).start);
    REQUIRE(t.events.back().start == event_number(8).start);
    REQUIRE(warnings.size() == 1);
    REQUIRE(warnings[0].find("1 torn record(s) dropped") != std::string::npos);
  }
  SECTION("a later lap: the slot holds the record one capacity older") {
    JournalImage j(16, 10);
    for (uint64_t s = 0; s < 25; ++s) j.store(s);
    j.tear(25, stored);  // over event 9's slot: 9's words, 25's opening word
    j.store(26);
    std::vector<std::string> warnings;
    trace::JournalThread t = trace::read_thread_journal(j.write(dir.path), &warnings);
    std::vector<int64_t> starts;
    for (const trace::RawEvent& ev : t.events) starts.push_back(ev.start);
    std::vector<int64_t> want;
    for (uint64_t s = 11; s < 25; ++s) want.push_back(event_number(s).start);
    want.push_back(event_number(26).start);
    REQUIRE(starts == want);    // 10's slot holds 26; 25 torn
    REQUIRE(t.before.empty());  // 9, before the mark, was overwritten
    REQUIRE(warnings.size() == 3);
    REQUIRE(warnings[0].find("1 torn record(s) dropped") != std::string::npos);
    REQUIRE(warnings[1].find("events 10 to 10 of thread 0 are lost") != std::string::npos);
    REQUIRE(warnings[2].find("events 25 to 25 of thread 0 are lost") != std::string::npos);
  }
}

TEST_CASE("a child process's journals are told from its rank's", "[preload][journal]") {
  TempDir dir;
  const std::string rank = trace::rank_file_name(1), child = trace::child_file_name(1, 77, 0xabc);
  for (const std::string& name : {trace::journal_file_name(rank, 0), trace::journal_file_name(rank, 12),
                                  trace::journal_meta_name(rank), trace::journal_file_name(child, 0),
                                  trace::journal_meta_name(child), trace::spill_file_name(1), std::string("x.journal")})
    close(open((dir.path + "/" + name).c_str(), O_CREAT | O_WRONLY, 0644));
  REQUIRE(trace::journal_file_name(child, 3) == "rank-000001.child-77-abc.t0003.journal");
  REQUIRE(trace::journaled_traces(dir.path) == std::vector<std::string>{child, rank});  // sorted
  const std::string d = dir.path + "/";
  REQUIRE(trace::journal_files(dir.path, rank) == std::vector<std::string>{d + "rank-000001.meta.journal",
                                                                           d + "rank-000001.t0000.journal",
                                                                           d + "rank-000001.t0012.journal"});
  REQUIRE(trace::journal_files(dir.path, child) ==
          std::vector<std::string>{d + "rank-000001.child-77-abc.meta.journal",
                                   d + "rank-000001.child-77-abc.t0000.journal"});
}

TEST_CASE("the rings of any number of threads stay within the process's share of MPIOR_MEMORY", "[preload][journal]") {
  const uint64_t budget = GENERATE(uint64_t(1024), uint64_t(5000), uint64_t(65536), uint64_t(1) << 20);
  uint64_t left = budget, taken = 0, rings = 0;
  for (int thread = 0; thread < 200; ++thread) {
    const uint64_t r = journal::ring_records(65536, left);
    if (r == 0) continue;
    REQUIRE(r >= journal::kMinRing);
    REQUIRE((r & (r - 1)) == 0);
    REQUIRE(r <= 65536);
    REQUIRE(r <= left);
    left -= r, taken += r, ++rings;
  }
  REQUIRE(taken <= budget);
  REQUIRE(rings >= (budget >= 4 * journal::kMinRing ? 3u : 1u));  // more threads than the first have one
  REQUIRE(left < 2 * journal::kMinRing);                          // the budget is used up
  // No cap: every thread its MPIOR_JOURNAL records.
  REQUIRE(journal::ring_records(65536, UINT64_MAX) == 65536);
  REQUIRE(journal::ring_records(65536, UINT64_MAX - 65536) == 65536);
}

TEST_CASE("the shared journal gives each thread its records after its own flush mark", "[preload][journal]") {
  TempDir dir;
  const uint64_t capacity = 8;
  std::vector<uint8_t> bytes(trace::kJournalSharedRecords + capacity * sizeof(trace::JournalRecord));
  trace::JournalHeader h;
  h.record_size = sizeof(trace::JournalRecord);
  h.kinds = trace::kinds_fingerprint();
  h.thread = trace::kJournalShared;
  h.capacity = capacity;
  std::memcpy(bytes.data(), &h, sizeof h);
  auto* flushed = reinterpret_cast<uint64_t*>(bytes.data() + trace::kJournalHeaderBytes);
  auto* recs = reinterpret_cast<trace::JournalRecord*>(bytes.data() + trace::kJournalSharedRecords);
  flushed[7] = 2;  // thread 7's first two events are in the rank file
  // Slots taken in turn: thread 7's events 0..4 and thread 9's 0..2, interleaved.
  const std::pair<uint32_t, uint64_t> order[] = {{7, 0}, {9, 0}, {7, 1}, {7, 2}, {9, 1}, {7, 3}, {9, 2}, {7, 4}};
  for (size_t i = 0; i < capacity; ++i) {
    const auto [thread, seq] = order[i];
    journal::store_record(recs[i], event_number(thread * 100 + seq), trace::journal_shared_word(thread, seq) - 1);
  }
  recs[6].commit = 0;  // thread 9's event 2: torn
  const std::string path = dir.path + "/" + trace::journal_shared_name(trace::rank_file_name(3));
  trace::write_file_atomic(path, bytes);
  std::vector<std::string> warnings;
  std::vector<trace::JournalThread> threads = trace::read_shared_journal(path, &warnings);
  REQUIRE(threads.size() == 2);
  REQUIRE(threads[0].thread == 7);
  std::vector<int64_t> starts;
  for (const trace::RawEvent& ev : threads[0].events) starts.push_back(ev.start);
  REQUIRE(starts == std::vector<int64_t>{event_number(702).start, event_number(703).start, event_number(704).start});
  REQUIRE(threads[0].before.size() == 1);  // event 1, at depth 0
  REQUIRE(threads[1].thread == 9);
  REQUIRE(threads[1].events.size() == 2);
  REQUIRE(warnings.size() == 1);
  REQUIRE(warnings[0].find("1 torn record(s) dropped") != std::string::npos);
  REQUIRE(trace::journaled_traces(dir.path) == std::vector<std::string>{trace::rank_file_name(3)});
  REQUIRE(trace::journal_files(dir.path, trace::rank_file_name(3)) == std::vector<std::string>{path});
  REQUIRE_THROWS_AS(trace::read_thread_journal(path, &warnings), trace::FormatError);
  // The rank file holds thread 9's first event, though the table says none: the file's mark holds.
  const std::vector<trace::JournalMark> marks{{9, 1}};
  REQUIRE(trace::read_shared_journal(path, &warnings, marks)[1].events.size() == 1);
}

TEST_CASE("the shared ring holds what its share of the journal bytes fits", "[preload][journal]") {
  REQUIRE(journal::shared_records(trace::kJournalSharedRecords + 1023 * sizeof(trace::JournalRecord)) == 0);
  REQUIRE(journal::shared_records(trace::kJournalSharedRecords + 3000 * sizeof(trace::JournalRecord) + 5) == 3000);
}

TEST_CASE("recovery starts at the trace file's own mark when the journal's lags", "[preload][journal]") {
  // The process died after writing its trace file and before moving the journal's mark.
  TempDir dir;
  JournalImage j(32, 4);
  for (uint64_t s = 0; s < 20; ++s) j.store(s);
  const std::string path = j.write(dir.path);
  std::vector<std::string> warnings;
  const std::vector<trace::JournalMark> marks{{1, 18}, {0, 12}};
  trace::JournalThread t = trace::read_thread_journal(path, &warnings, marks);
  REQUIRE(t.events.size() == 8);  // 12 to 19: the file holds 0 to 11
  REQUIRE(t.events.front().start == event_number(12).start);
  REQUIRE(t.before.size() == 1);  // the file's last event, at depth 0
  REQUIRE(t.before.back().start == event_number(11).start);
  REQUIRE(warnings.empty());
  SECTION("a mark behind the journal's (an older file) changes nothing") {
    const std::vector<trace::JournalMark> older{{0, 2}};
    REQUIRE(trace::read_thread_journal(path, &warnings, older).events.size() == 16);  // 4 to 19
    REQUIRE(trace::read_thread_journal(path, &warnings).events.size() == 16);
  }
}

TEST_CASE("a thread with a journal ring folds its records from there, the same stream as without",
          "[preload][journal]") {
  TempDir dir;
  clock::start(false);
  journal::start(dir.path, trace::rank_file_name(4), 4);
  struct Stop {  // the rings are forgotten for the tests after this one, whatever fails
    ~Stop() {
      journal::finish();
      journal::reset_after_fork();
    }
  } stop;
  // Thread 6 maps its ring at its first record and folds its later chunks
  // from it; thread kMaxThreads has no journal and folds from its array.
  // Another thread snapshots the first meanwhile: it takes records from the
  // ring, and the recording thread parks the ring's chunks for it.
  ThreadRecorder ringed(6, {.lossless = true}), plain(journal::kMaxThreads, {.lossless = true});
  const int64_t t = clock::now();
  uint64_t x = 88172645463325252ull;
  const int calls = 3000;
  std::atomic<bool> done{false};
  std::atomic<int> taken{0};
  std::thread snapshots([&] {
    for (; !done.load(); ++taken) (void)ringed.snapshot(4);
  });
  for (int i = 0; i < calls; ++i) {
    if (i == calls / 2)  // a snapshot that starts now, its chunk in the ring
      for (const int before = taken.load(); taken.load() < before + 2;) std::this_thread::yield();
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    trace::RawEvent ev = event_number(uint64_t(i));
    ev.start = t + 40 * i + int64_t(x % 7);
    ev.end = ev.start + 3 + int64_t(x % 11);
    ev.tracer = int64_t(x % 5);
    ev.callsite = 0;
    ev.args[trace::arg::offset] = int64_t(x % 100000) * 64;
    trace::RawEvent copy = ev;
    ringed.record(ev);
    plain.record(copy);
  }
  done.store(true);
  snapshots.join();
  REQUIRE(journal::own_ring(6) != nullptr);
  REQUIRE(journal::own_ring(journal::kMaxThreads) == nullptr);
  const trace::Stream from_ring = ringed.snapshot(4), from_array = plain.snapshot(4);
  trace::EventCursor a(from_ring, 0), b(from_array, 0);
  trace::Event ea, eb;
  int n = 0;
  for (; a.next(ea); ++n) {
    REQUIRE(b.next(eb));
    REQUIRE(std::tie(ea.kind, ea.start_ns, ea.end_ns, ea.gap_ns, ea.dur_ns, ea.ret, ea.args) ==
            std::tie(eb.kind, eb.start_ns, eb.end_ns, eb.gap_ns, eb.dur_ns, eb.ret, eb.args));
  }
  REQUIRE(!b.next(eb));
  REQUIRE(n == calls);
  // The ring still journals every record: the last ones are there, whole.
  std::vector<std::string> warnings;
  const std::string path = dir.path + "/" + trace::journal_file_name(trace::rank_file_name(4), 6);
  const std::vector<trace::RawEvent> kept = trace::read_thread_journal(path, &warnings).events;
  REQUIRE(warnings.empty());
  REQUIRE(kept.size() == size_t(calls));
  REQUIRE(kept.back().args[trace::arg::offset] == ea.args[trace::arg::offset]);
}
