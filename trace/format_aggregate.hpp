// Several ranks' traces in one file (an aggregator's, or the job's): the
// encoded rank traces as each rank would have written them, behind an index.
//   "MPIORAGG" | version (u32) | index length (u64) | index | CRC-32C of all
//   before (u32) | the rank traces, back to back | "MPIOREND"
// The index: kinds checksum (u32), job id, job size, and per rank its number,
// offset (from the first trace byte), length and CRC-32C. Readers check the
// index, the end marker and each entry they read, and name the file and the
// rank entry that fails.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mpior::trace {

// The file of the job's ranks when one file holds them all, and an
// aggregator's (named by its rank) otherwise.
inline constexpr const char* kJobTracesFileName = "ranks.mpior";
std::string aggregate_file_name(int32_t aggregator);  // ranks-000004.mpior
// Whether name is one of the two.
bool is_aggregate_file_name(const std::string& name);

struct AggregateEntry {
  int32_t rank = 0;
  uint64_t offset = 0, length = 0;
  uint32_t crc = 0;
  bool operator==(const AggregateEntry&) const = default;
};

struct AggregateIndex {
  uint64_t job_id = 0;
  int32_t size = 0;
  std::vector<AggregateEntry> entries;  // ascending ranks
  size_t data_start = 0;                // where the traces start in the file
};

// The file's head (up to the first trace byte) for traces laid out back to
// back with these lengths; entries get offsets and CRCs from `traces`.
// The whole file is head + traces + aggregate_tail().
std::vector<uint8_t> aggregate_head(uint64_t job_id, int32_t size, std::span<const int32_t> ranks,
                                    std::span<const uint64_t> lengths, std::span<const uint8_t> traces);
std::span<const uint8_t> aggregate_tail();
// All three in one buffer (tests, tools).
std::vector<uint8_t> encode_aggregate(uint64_t job_id, int32_t size, std::span<const int32_t> ranks,
                                      std::span<const uint64_t> lengths, std::span<const uint8_t> traces);

// Checks the head and the end marker; throws FormatError naming `name`.
AggregateIndex decode_aggregate_index(std::span<const uint8_t> bytes, const std::string& name);
// Entry i's bytes (an encoded rank trace), its checksum checked.
std::span<const uint8_t> aggregate_entry(std::span<const uint8_t> bytes, const AggregateIndex& index, size_t i,
                                         const std::string& name);

// Writes the parts as one file: a temporary beside it, fsync, rename, fsync
// of the directory, so the file is there after a crash once this returns.
void write_file_durable(const std::string& path, std::span<const std::span<const uint8_t>> parts);

}  // namespace mpior::trace
