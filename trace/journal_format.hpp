// The crash journal (preload/journal.hpp): per thread, a file the tracer
// maps shared and writes every raw record into, so that a process killed
// by SIGKILL (the launcher ending the other ranks when one dies) leaves its
// recent records behind: the kernel keeps a dead process's dirty pages of a
// shared file mapping. Beside them, one file per rank appends the file and
// communicator table entries made after the rank file was first written.
//
// Thread journal (rank-NNNNNN.tTTTT.journal): a JournalHeader, then a ring
// of `capacity` JournalRecords; the record of the thread's event number
// `seq` (counted from the thread's first event) sits in slot seq %
// capacity. A record is whole when its check matches: one killed mid-copy
// is dropped with a warning.
//
// Meta journal (rank-NNNNNN.meta.journal): a sequence of frames, each
// u32 length, u32 crc32c of the payload, then the payload: u8 type, then
// for 1 (a file entry) its id (zigzag varint) and the entry as a rank trace
// encodes it, for 2 (a communicator entry) the entry as a rank trace does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/event.hpp"
#include "trace/model.hpp"

namespace mpior::trace {

inline constexpr uint64_t kJournalMagic = 0x314c4e4a524f504dull;  // "MPORJNL1"
inline constexpr uint32_t kJournalVersion = 1;
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

struct JournalRecord {
  RawEvent ev;
  uint64_t seq = 0;
  uint64_t check = 0;  // journal_check(ev, seq)
};

// Cheap enough for the hot path (two independent chains the compiler
// vectorises): a sum and an xor of the record's words, mixed with its
// sequence number, so that a record half old, half new fails.
inline uint64_t journal_check(const RawEvent& ev, uint64_t seq) noexcept {
  static_assert(sizeof(RawEvent) % 16 == 0);
  uint64_t w[sizeof(RawEvent) / 8];
  __builtin_memcpy(w, &ev, sizeof w);
  uint64_t sum = seq, mix = 0x6a09e667f3bcc909ull;
  for (size_t i = 0; i < sizeof w / 8; i += 2) {
    sum += w[i];
    mix ^= w[i + 1];
  }
  return (sum * 0x9e3779b97f4a7c15ull) ^ (mix + (mix >> 29)) ^ seq;
}

std::string journal_file_name(int32_t rank, uint32_t thread);  // rank-000042.t0003.journal
std::string journal_meta_name(int32_t rank);                   // rank-000042.meta.journal
// Journal files of rank in dir (thread journals and the meta journal).
std::vector<std::string> journal_files(const std::string& dir, int32_t rank);

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
JournalThread read_thread_journal(const std::string& path, std::vector<std::string>* warnings);

// Meta journal frames.
std::vector<uint8_t> journal_file_frame(int32_t id, const FileEntry& f);
std::vector<uint8_t> journal_comm_frame(const CommEntry& c);
struct JournalMeta {
  std::vector<std::pair<int32_t, FileEntry>> files;
  std::vector<CommEntry> comms;
};
JournalMeta read_meta_journal(const std::string& path, std::vector<std::string>* warnings);

}  // namespace mpior::trace
