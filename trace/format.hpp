// mpior's files. Every file is a container:
//   magic (8 bytes: MPIORTRC rank trace, MPIORJOB job, MPIORPLN plan;
//   MPIORAGG, an aggregate of rank traces, has a layout of its own: aggregate.hpp)
//   version (u32) | compression (u8: 0 none, 1 zstd) | body length (u64)
//   | stored length (u64) | body | CRC-32C of all before (u32) | "MPIOREND"
// The body starts with a CRC-32C of the event kinds' names in order: kinds are
// stored by number, so a file from an mpior with another function list is
// refused, not misread.
// Readers reject a wrong magic, an unknown version, truncation and a checksum
// mismatch with one FormatError naming the file.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "trace/codec.hpp"
#include "trace/model.hpp"

namespace mpior::trace {

// Each file type has its own version, bumped whenever its encoding changes,
// so a file of another version is refused as older or newer, not as corrupt.
// Rank traces, job records, plans, spill segments and aggregates:
// 2: plans carry how they were extrapolated (ExtrapInfo).
// 3: every body starts with a checksum of the event kind table.
// 4: ranks' clock offsets to rank 0 (ProcessInfo), aligned trace starts (PlanRank).
// 5: each rank's waiting for a CPU left out of its computation (ProcessInfo).
// 6: each rank's CPU placement (ProcessInfo).
// 7: signal handlers' calls counted but not recorded (RankTrace::unrecorded).
// 8: the events of each thread a rank trace holds (RankTrace::journaled).
// 9: the job's MPI library and MPI-IO layer (JobInfo).
// 10: the MPI-IO hints files ran with, OMPIO's forced fcoll (JobInfo).
inline constexpr uint32_t kFormatVersion = 10;
// Older versions still read: from 9 on, every change is a field under
// io.since in its description (trace/format_fields.hpp).
inline constexpr uint32_t kOldestFormatVersion = 9;
// Merged job traces (MPIORMRG; 4: the first, written with the others' number):
// 5: ranks' records column by column, compact timing statistics (histograms
//    from min's bin to max's), MPI_COMM_SELF runs, numbered paths renumbered.
// 6: each rank's waiting for a CPU.
// 7: each rank's CPU placement.
// 8: signal handlers' calls counted but not recorded (MergedRank::unrecorded).
inline constexpr uint32_t kMergedFormatVersion = 8;
// Plans (MPIORPLN; 4: the first, written with the others' number):
// 5: each communicator's origin (how it was made).
// 6: each rank's waiting for a CPU (PlanRank).
// 7: each rank's CPU placement (PlanRank).
// 8: the ranks a partial plan lacks (Plan::missing).
// 9: the job's MPI library and MPI-IO layer (JobInfo).
// 10: the MPI-IO hints files ran with, OMPIO's forced fcoll (JobInfo).
inline constexpr uint32_t kPlanFormatVersion = 10;
inline constexpr uint32_t kOldestPlanFormatVersion = 9;
// Why a file of version `found` is refused by a reader of version `reads`
// ("format version 3 (written by an older mpior), ...").
std::string version_mismatch(uint32_t found, uint32_t reads);
inline constexpr const char* kJobFileName = "job.mpior";
inline constexpr const char* kPlanFileName = "plan.mpior";
// Several ranks' traces in one indexed file (aggregate.hpp).
inline constexpr const char* kAggregateMagic = "MPIORAGG";
// The job's ranks merged into one trace at finalize (MergedJob, magic MPIORMRG).
inline constexpr const char* kMergedFileName = "merged.mpior";

// CRC-32C of the event kinds' names in order (what every body starts with).
uint32_t kinds_fingerprint();

std::string rank_file_name(int32_t rank);  // rank-000042.mpior
// The older part of a rank's streams the tracer moved out of memory
// (MPIOR_MEMORY): rank-000042.spill.mpior, a sequence of segments.
std::string spill_file_name(int32_t rank);
// Rank number of a rank file name, or -1.
int32_t rank_from_file_name(const std::string& name);
// A process a rank started (fork, exec, system): rank-000042.child-4711-SERIAL.mpior
// (an exec keeps the pid: the serial tells the images apart).
std::string child_file_name(int32_t rank, int64_t pid, uint64_t serial);
bool child_from_file_name(const std::string& name, int32_t* rank, int64_t* pid);

// One part of a thread's stream moved out of memory, appended to the rank's
// spill file as a container of its own (magic MPIORSPL), so a segment torn by
// a crash mid-append is found by its checksum.
struct SpillSegment {
  int32_t rank = 0;
  uint64_t seq = 0;  // its place in the spill file, from 0
  Stream stream;     // stream.thread: whose events
};

// How hard zstd works on a rank trace's body: `fast` for the tracer's
// periodic and crash rewrites, each replaced by the next (the final write
// keeps `small`).
enum class Effort : uint8_t { small, fast };
std::vector<uint8_t> encode(const RankTrace& t, Effort effort = Effort::small);
// A rank's communicator table encoded as it grows: the tracer's periodic
// flush appends the entries made since its last write instead of encoding
// the whole table again (an entry never changes once made), and compresses
// each whole frame_bytes of it once: a compressed body may be several zstd
// frames, which decompress as one.
struct EncodedComms {
  uint64_t count = 0;          // entries encoded
  std::vector<uint8_t> bytes;  // their encoding, in table order
  size_t framed = 0;           // bytes[0, framed) compressed, in `frames`
  std::vector<uint8_t> frames;
  size_t frame_bytes = size_t(256) << 10;
  void append(const CommEntry& c);
};
// The trace encode(t) gives when t.comms holds the entries comms stands for
// (t.comms itself is not read): the same body, its compressed frames split
// elsewhere. Compresses comms's new whole frames.
std::vector<uint8_t> encode(const RankTrace& t, EncodedComms& comms, Effort effort = Effort::small);
std::vector<uint8_t> encode(const SpillSegment& s);
std::vector<uint8_t> encode(const JobInfo& j);
std::vector<uint8_t> encode(const Plan& p);
std::vector<uint8_t> encode(const MergedJob& m);

RankTrace decode_rank_trace(std::span<const uint8_t> bytes, const std::string& name);
JobInfo decode_job(std::span<const uint8_t> bytes, const std::string& name);
Plan decode_plan(std::span<const uint8_t> bytes, const std::string& name);
// Checks that every index is in its table and the ranks ascend below size.
MergedJob decode_merged_job(std::span<const uint8_t> bytes, const std::string& name);
// The segments of a spill file in order, up to the first one that is
// truncated or damaged (a crash mid-append): *damage then says where and why.
std::vector<SpillSegment> decode_spill(std::span<const uint8_t> bytes, const std::string& name, std::string* damage);

// What kind of mpior file the bytes are, by magic; empty when none.
std::string file_type(std::span<const uint8_t> bytes);

// Whole-file helpers for the tools. Errors name the path.
std::vector<uint8_t> read_file(const std::string& path);
void write_file_atomic(const std::string& path, std::span<const uint8_t> bytes);

RankTrace read_rank_trace(const std::string& path);
JobInfo read_job(const std::string& path);
Plan read_plan(const std::string& path);

}  // namespace mpior::trace
