// The trace model: per-thread event streams as PRSD trees (loops of events,
// nested to any depth; a flat sequence is the degenerate case), the tables
// they refer to, and the three documents built from them: a rank's trace, the
// job record, and the plan mpior-post writes and mpior-replay runs.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "trace/event.hpp"
#include "trace/kind.hpp"
#include "trace/timing.hpp"
#include "trace/value_seq.hpp"

namespace mpior::trace {

// Values an argument took over a position's occurrences, for every rank of
// the stream. Usually one sequence shared by all the stream's ranks; when
// ranks differ, `ranked` indexes Stream::ranked.
struct Param {
  SeqRef seq;
  int32_t ranked = -1;
  bool operator==(const Param&) const = default;
};

// Values for a subset of a stream's ranks: value = seq[i] + scale * rank, so
// file_<rank> ids and rank*blocksize offsets of all ranks share one entry.
struct RankVariant {
  SeqRef ranks;
  SeqRef seq;
  int64_t scale = 0;
  bool operator==(const RankVariant&) const = default;
};

// One trace position: a call site and kind, with every occurrence's
// arguments, return value, errno and timing.
struct Leaf {
  Kind kind{};
  uint8_t depth = 0;
  uint8_t flags = 0;
  uint64_t callsite = 0;
  std::array<Param, kNumArgs> args{};
  Param ret, err;
  TimeStats gap, dur;
  Param exact_gap, exact_dur;  // every value, when the stream is lossless
  bool operator==(const Leaf&) const = default;
};

// A node of the flattened tree: a leaf, or a loop whose body is the next
// `span` nodes, repeated `iters` times (iteration counts may differ from one
// occurrence of the loop to the next, and from rank to rank).
struct Node {
  bool loop = false;
  uint32_t index = 0;  // leaf index, or body span for a loop
  Param iters;
  bool operator==(const Node&) const = default;
};

struct Stream {
  SeqRef ranks;         // world ranks this stream stands for
  uint32_t thread = 0;  // thread index within each of those ranks
  bool lossless = false;
  std::vector<Node> nodes;
  std::vector<Leaf> leaves;
  std::vector<std::vector<RankVariant>> ranked;
  SeqArena values;

  std::span<const SeqItem> view(SeqRef r) const { return values.view(r); }
  std::vector<int64_t> rank_list() const { return seq_expand(view(ranks)); }
  bool operator==(const Stream&) const = default;
};

// ---- tables ---------------------------------------------------------------

struct FileEntry {
  std::string path;    // absolute and lexically normal, as the process named it
  int64_t flags = -1;  // flags of the first open, -1 when only named (stat, unlink)
  bool operator==(const FileEntry&) const = default;
};

// intercomm: Intercomm_create (members: the group holding the lower world rank
// first, then the other; peers on it are positions in that list); merge:
// Intercomm_merge; group: Comm_create_group; from_group: MPI-4
// Comm_create_from_group; graph: Graph_create, Dist_graph_create*. The last
// three and intercomm are resolved by members, like unknown ones.
enum class CommOrigin : uint8_t {
  world,
  self,
  dup,
  split,
  create,
  cart,
  cart_sub,
  unknown,
  intercomm,
  merge,
  group,
  from_group,
  graph
};

struct CommEntry {
  int32_t id = 0;  // rank-local id (events use it)
  CommOrigin origin = CommOrigin::unknown;
  int32_t parent = -1;      // local id of the communicator it was made from
  uint64_t parent_seq = 0;  // collectives on the parent before this creation
  int64_t color = 0, key = 0;
  std::vector<int32_t> members;  // world ranks, in communicator rank order
  bool operator==(const CommEntry&) const = default;
};

// ---- documents ------------------------------------------------------------

// Where a rank could run when traced: how many CPUs its affinity mask
// allowed at trace start and how many the node had online (0: not known).
// Bound (mpirun -bind-to core, srun --cpu-bind) when it allowed fewer: the
// replay places its threads the same way (replayer/bind.hpp), as
// unbound ranks on shared cores lose time to the scheduler's placement
// that bound ones do not.
struct CpuPlacement {
  int32_t allowed = 0;
  int32_t online = 0;
  bool bound() const { return allowed > 0 && allowed < online; }
  bool operator==(const CpuPlacement&) const = default;
};

struct ProcessInfo {
  uint64_t job_id = 0;
  int32_t rank = 0;
  int32_t size = 1;
  bool mpi = false;       // the process called MPI_Init
  bool finished = false;  // written at MPI_Finalize or exit, not a checkpoint
  bool pruning = false;   // MPI synchronisation that cannot affect I/O was left out (online pruning)
  int64_t pid = 0;
  std::string host, exe, cmdline, cwd;
  int64_t clock_mono_ns = 0;    // CLOCK_MONOTONIC at trace start
  int64_t clock_real_ns = 0;    // CLOCK_REALTIME at trace start
  int64_t end_ns = 0;           // relative to trace start
  int64_t clock_offset_ns = 0;  // add to CLOCK_MONOTONIC readings for rank 0's (aligned at MPI_Init; 0 without MPI)
  int64_t cpu_wait_ns = 0;      // waits for a CPU left out of the computation recorded (MPIOR_STOLEN_CHECK_US)
  CpuPlacement placement = {};
  bool operator==(const ProcessInfo&) const = default;
};

// Per kind: calls made but not kept (online pruning) and the time they took.
struct KindTally {
  uint64_t calls = 0;
  int64_t time_ns = 0;
  bool operator==(const KindTally&) const = default;
};
using KindTallies = std::array<KindTally, kNumKinds>;

// A recorder thread's events a trace file holds: its crash journal's flush
// mark as of that write (trace/journal_format.hpp).
struct JournalMark {
  uint32_t thread = 0;
  uint64_t events = 0;
  bool operator==(const JournalMark&) const = default;
};

struct RankTrace {
  ProcessInfo process;
  std::vector<FileEntry> files;
  std::vector<CommEntry> comms;
  std::vector<Stream> streams;
  KindTallies pruned{};
  KindTallies excluded{};  // calls naming an excluded path (MPIOR_EXCLUDE): counted, not kept
  // Calls signal handlers made while interrupting the tracer that it could
  // only count, not record (no deferred form, or no memory to defer them).
  KindTallies unrecorded{};
  // Segments of the rank's spill file (MPIOR_MEMORY) that hold the streams'
  // older events: the first spill_segments, whatever was appended later.
  uint64_t spill_segments = 0;
  // Per recorder thread, the events this file holds: recovery folds the
  // journal's records from there, also when the process died between
  // writing this file and moving the journal's own mark.
  std::vector<JournalMark> journaled;
  bool operator==(const RankTrace&) const = default;
};

// The job's ranks merged at MPI_Finalize (merge/merge_job.hpp), one file
// (merged.mpior): the streams merged across ranks (rank lists, rank
// variants; file and communicator ids rank-local, as in a rank trace), one
// table of the distinct file and communicator entries of all ranks, and per
// rank what is its own: its process record and, by index into those tables,
// its file and communicator tables.
struct MergedRank {
  ProcessInfo process;
  std::vector<int32_t> files;  // local file id -> index into MergedJob::files
  std::vector<int32_t> comms;  // local entry -> index into MergedJob::comms
  KindTallies pruned{}, excluded{}, unrecorded{};
  bool operator==(const MergedRank&) const = default;
};

struct MergedJob {
  uint64_t job_id = 0;
  int32_t size = 1;
  std::vector<FileEntry> files;
  std::vector<CommEntry> comms;
  std::vector<Stream> streams;
  std::vector<MergedRank> ranks;  // ascending process.rank
  bool operator==(const MergedJob&) const = default;
};

enum class JobState : uint8_t { running, complete };

// Which file of the trace directory holds which ranks' traces (the job
// record's layout, written at a clean finalize): an aggregate file
// (trace/format_aggregate.hpp) or a rank's own rank-NNNNNN.mpior.
struct TraceFileRanks {
  std::string name;            // file name in the trace directory
  std::vector<int32_t> ranks;  // ascending
  bool operator==(const TraceFileRanks&) const = default;
};

// One MPI-IO hint of a file as MPI_File_get_info reported it after the call
// that could change it (open, set_view, set_info): `given` when the
// program passed it in that call's MPI_Info (or an earlier one on the
// handle), else the library's own value.
struct MpiioHint {
  std::string key, value;
  bool given = false;
  bool operator==(const MpiioHint&) const = default;
};
// The hints (trace/mpiio_hints.hpp's keys, in that order) a file ran with on
// the rank that wrote the job record: one entry per handle opened, and one
// more when set_view or set_info changed them; a set equal to the one
// recorded last for that path is not repeated.
struct MpiioHintSet {
  std::string path;
  std::vector<MpiioHint> hints;
  bool operator==(const MpiioHintSet&) const = default;
};

struct JobInfo {
  uint64_t job_id = 0;
  int32_t size = 1;
  JobState state = JobState::running;
  std::string cmdline, cwd, host;
  int64_t start_real_ns = 0;
  // The MPI the job ran on: MPI_Get_library_version's first line ("" without
  // MPI), and the MPI-IO layer its files went through: "romio" (MPICH's),
  // "ompio" (Open MPI's own component), "" when not known (Open MPI's
  // romio321 component, or no file opened through MPI-IO on rank 0).
  std::string mpi_library, mpi_io;
  // Under OMPIO: the collective component forced for the job (the MCA
  // parameter fcoll, as OMPI_MCA_fcoll hands it to the ranks); "" when
  // OMPIO chose for itself or the job did not run under OMPIO.
  std::string ompio_fcoll;
  std::vector<MpiioHintSet> mpiio_hints;
  uint64_t mpiio_hint_sets_dropped = 0;     // sets past kMaxHintSets, not recorded
  std::vector<int32_t> ranks_written;       // ranks that reported a successful write at finalize
  std::vector<TraceFileRanks> trace_files;  // job record only (never in a plan); empty: rank files
  bool operator==(const JobInfo&) const = default;
};

struct PlanFile {
  std::string path;          // absolute, as traced
  bool created = false;      // the application created it (open with O_CREAT, mkdir, rename target)
  bool existed = false;      // the application found it there: a call on it succeeded before any created it
  bool directory = false;    // made with mkdir, or a directory the app used
  int64_t initial_size = 0;  // bytes that must exist before replay (read, not written first)
  bool operator==(const PlanFile&) const = default;
};

struct PlanComm {
  std::vector<int32_t> members;  // world ranks in communicator rank order
  // How it was made: world, self and unknown ones exist from the start of a
  // replay; the others are made at their creating record and go at their
  // MPI_Comm_free (an MPI replay holds only the communicators alive at once).
  CommOrigin origin = CommOrigin::unknown;
  bool operator==(const PlanComm&) const = default;
};

// Events keep their rank-local file and communicator ids (so ranks doing the
// same thing have equal streams and merge); each rank maps them to global ids.
struct PlanRank {
  std::string host, cwd;
  int64_t traced_ns = 0;        // wall time from trace start to end
  std::vector<int32_t> files;   // local file id -> global file id
  std::vector<int32_t> comms;   // local communicator id -> global id (-1: freed before use)
  int64_t start_ns = 0;         // trace start after the earliest rank's, on aligned clocks (0: not known)
  int64_t cpu_wait_ns = 0;      // of traced_ns: waiting for a CPU, not replayed (ProcessInfo::cpu_wait_ns)
  CpuPlacement placement = {};  // as traced
  bool operator==(const PlanRank&) const = default;
};

// How an extrapolated plan was made (mpior-post --extrapolate): the inputs
// and, per extrapolated quantity, the model chosen. Empty for a traced plan.
struct ExtrapNote {
  int32_t stream = -1;  // index in Plan::streams; -1 for the tables (files, communicators, rank lists)
  int32_t leaf = -1;    // position, or -1
  int32_t node = -1;    // loop node (trip counts), or -1
  std::string what;     // "offset", "iters", "rank list", "file name", ...
  std::string model;    // "item 0 value = 960*r/n"
  std::string name;     // the model's name: "strong scaling"
  bool operator==(const ExtrapNote&) const = default;
};

// ExtrapNote::name of an incidental quantity no model fits exactly, which
// took the registry's best fit (extrap/incidental.hpp).
inline constexpr const char* kApproximateModel = "approximate";

struct ExtrapInfo {
  int32_t target = 0;                // 0: not extrapolated
  std::vector<std::string> inputs;   // the input directories, as named
  std::vector<int32_t> input_ranks;  // their rank counts
  std::vector<ExtrapNote> notes;
  bool operator==(const ExtrapInfo&) const = default;
};

// What mpior-replay runs.
struct Plan {
  JobInfo job;
  std::vector<PlanRank> ranks;
  std::vector<PlanFile> files;
  std::vector<PlanComm> comms;
  std::vector<Stream> streams;
  KindTallies pruned{};
  ExtrapInfo extrap;
  // A partial plan (mpior-post --partial): ranks that left no trace, sorted.
  // Each keeps its place (a PlanRank, no stream); its part of every collective
  // and message on a communicator listing it is absent, and mpior-replay
  // meets and receives without it.
  std::vector<int32_t> missing;
  bool operator==(const Plan&) const = default;
};

}  // namespace mpior::trace
