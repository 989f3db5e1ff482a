// The crash journal (preload/journal.hpp): per thread, a file the tracer
// maps shared and writes every raw record into, so that a process killed
// by SIGKILL (the launcher ending the other ranks when one dies) leaves its
// recent records behind: the kernel keeps a dead process's dirty pages of a
// shared file mapping. Beside them, one file per rank appends the file and
// communicator table entries made after the rank file was first written.
//
// Thread journal (rank-NNNNNN.tTTTT.journal, journal_file_name): a JournalHeader, then a ring
// of `capacity` JournalRecords; the record of the thread's event number
// `seq` (counted from the thread's first event) sits in slot seq %
// capacity. A record is whole when its two sequence words match: one
// killed mid-store is dropped with a warning.
//
// Shared journal (rank-NNNNNN.shared.journal, journal_shared_name): the
// ring of the threads that came when MPIOR_MEMORY held no more rings of
// their own. A JournalHeader (thread kJournalShared), a table of
// kJournalThreads u64s (from kJournalHeaderBytes: each thread's events the
// rank file holds), then `capacity` JournalRecords, filled in the order the
// threads took them; a record's two words are journal_shared_word(thread,
// seq).
//
// Meta journal (rank-NNNNNN.meta.journal): a sequence of frames, each
// u32 length, u32 crc32c of the payload, then the payload: u8 type, then
// for 1 (a file entry) its id (zigzag varint) and the entry as a rank trace
// encodes it, for 2 (a communicator entry) the entry as a rank trace does.
// The writer maps the file and grows it ahead: a zero length ends it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "trace/event.hpp"
#include "trace/model.hpp"

namespace mpior::trace {

inline constexpr uint64_t kJournalMagic = 0x314c4e4a524f504dull;  // "MPORJNL1"
inline constexpr uint32_t kJournalVersion = 2;
inline constexpr size_t kJournalHeaderBytes = 4096;

struct JournalHeader {
  uint64_t magic = kJournalMagic;
  uint32_t version = kJournalVersion;
  uint32_t record_size = 0;
  uint32_t kinds = 0;  // kinds_fingerprint(): the event kinds the records name
  int32_t rank = 0;
  uint32_t thread = 0;
  uint32_t pad = 0;
  uint64_t capacity = 0;  // records in the ring (a power of two)
  // The thread's events the rank file holds (its last write): recovery
  // folds the records from there on. Written after the rank file is.
  uint64_t flushed = 0;
  // Raw records carry clock ticks: ns since trace start = zero_ns + ticks * ns_per_tick.
  int64_t zero_ns = 0;
  double ns_per_tick = 1.0;
};

// A record is stored as a seqlock's write: `opened` first, then the event,
// then `commit` (a release store). A process killed mid-store stops between
// two of its stores with every earlier one in memory, so a record whose two
// words differ was torn; equal, the event between them is whole. The words
// sit at the record's two ends, `commit` first, so that a copy that reads
// the page in address order while it is written (the kernel writing a live
// page back) also sees them differ.
struct JournalRecord {
  uint64_t commit = 0;  // seq + 1 once the record is whole (0: never written)
  RawEvent ev;
  uint64_t opened = 0;  // seq + 1 of the record being stored
};
static_assert(sizeof(JournalRecord) == 128, "records stay within a page");

// The shared journal: its header's thread, the threads its table holds,
// where its records start.
inline constexpr uint32_t kJournalShared = UINT32_MAX;
inline constexpr uint32_t kJournalThreads = 4096;
inline constexpr size_t kJournalSharedRecords = kJournalHeaderBytes + kJournalThreads * sizeof(uint64_t);
// A shared record's word: its thread above bit 40, its event number + 1 below.
inline constexpr unsigned kJournalThreadShift = 40;
inline constexpr uint64_t journal_shared_word(uint32_t thread, uint64_t seq) noexcept {
  return (uint64_t(thread) << kJournalThreadShift) | (seq + 1);
}

// The record holds event number seq, whole.
inline bool journal_whole(const JournalRecord& r, uint64_t seq) noexcept {
  return r.commit == seq + 1 && r.opened == seq + 1;
}

// Journals are named for the trace file they extend (a rank's, a child
// process's): rank-000042.mpior's rank-000042.t0003.journal and
// rank-000042.meta.journal, rank-000042.child-PID-SERIAL.mpior's
// rank-000042.child-PID-SERIAL.t0000.journal.
std::string journal_file_name(const std::string& trace_name, uint32_t thread);
std::string journal_meta_name(const std::string& trace_name);
std::string journal_shared_name(const std::string& trace_name);
// Journal files of the trace file trace_name in dir (thread journals and
// the meta journal), paths.
std::vector<std::string> journal_files(const std::string& dir, const std::string& trace_name);
// The names of the trace files in dir that left journals, sorted.
std::vector<std::string> journaled_traces(const std::string& dir);

// A thread journal's records the rank file does not hold, times in ns as
// the recorder folds them, in order; what could not be read is told in
// warnings (a torn record, records the ring overwrote before a flush).
struct JournalThread {
  uint32_t thread = 0;
  int32_t rank = 0;
  uint64_t flushed = 0;
  std::vector<RawEvent> events;
  // The rank file's last events, back to its last at depth 0, when the ring
  // still holds them: the first recovered events' gaps are measured from
  // them on the same clock (the rank file's times leave the tracer's own
  // time out, the journal's do not).
  std::vector<RawEvent> before;
};
// `marks`: the trace file's own (RankTrace::journaled), which hold when the
// process died between writing it and moving the journal's marks.
JournalThread read_thread_journal(const std::string& path, std::vector<std::string>* warnings,
                                  std::span<const JournalMark> marks = {});
// The shared journal's threads, by thread.
std::vector<JournalThread> read_shared_journal(const std::string& path, std::vector<std::string>* warnings,
                                               std::span<const JournalMark> marks = {});

// Meta journal frames.
std::vector<uint8_t> journal_file_frame(int32_t id, const FileEntry& f);
std::vector<uint8_t> journal_comm_frame(const CommEntry& c);
struct JournalMeta {
  std::vector<std::pair<int32_t, FileEntry>> files;
  std::vector<CommEntry> comms;
};
JournalMeta read_meta_journal(const std::string& path, std::vector<std::string>* warnings);

}  // namespace mpior::trace
