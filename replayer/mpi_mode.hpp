// --mpi: the replay under mpirun, one MPI process per block of plan ranks.
// `mpirun -n K mpior-replay --mpi --fs DIR PLAN`: process p replays a
// contiguous block of the plan's ranks (one thread each, or more where the
// traced rank had threads; MPI_THREAD_MULTIPLE when a process holds more than
// one), messages and collectives between processes are real MPI calls on
// communicators made from the plan's communicator table (within a process
// they pass as the threads' replay passes them: MpiOps::local), MPI-IO is
// issued through MPI_File_*
// (the target's own MPI-IO aggregates), and rank 0 merges the reports.
#pragma once

#include <mpi.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "replayer/backend.hpp"
#include "replayer/cli.hpp"
#include "replayer/local_meet.hpp"
#include "replayer/mpi_hints.hpp"
#include "replayer/mpi_lateness.hpp"
#include "replayer/mpi_watchdog.hpp"
#include "replayer/mpiio_replay.hpp"

namespace mpior::replay {

// Which process replays which plan ranks: K processes, P ranks, blocks of
// P / K (the first P % K processes one more).
struct RankBlocks {
  int32_t ranks = 0, procs = 1;
  int32_t first(int32_t proc) const;  // first rank of a process's block
  int32_t owner(int32_t rank) const;
  int32_t local(int32_t rank) const { return rank - first(owner(rank)); }
  int32_t widest() const { return (ranks + procs - 1) / procs; }
};

// One plan communicator as MPI sees it: the processes holding its members.
// World, self and communicators of unknown origin are made at the start,
// collectively over MPI_COMM_WORLD; the others at their creating record, by
// their members only (MPI_Comm_create_group, or MPI_Comm_idup of the parent
// for an MPI_Comm_idup), and freed at their MPI_Comm_free: a replay holds
// only the communicators alive at once, as the program did (MPICH's
// comm/ctxalloc makes 200,000 one after another; MPI has a few thousand).
struct MpiComm {
  MPI_Comm msg = MPI_COMM_NULL;   // messages (the plan's and the replay's own, by tag) and collectives
  MPI_Comm file = MPI_COMM_NULL;  // MPI_File_open, made at the first (one process per rank; blocks: each rank alone)
  std::vector<int32_t> procs;     // world process ranks in it, sorted: index = rank in msg
  std::unique_ptr<LocalMeet> meet;
  int64_t agreed_since = 0;  // the last barrier's agreed planned arrival (mpi_lateness.hpp), under meet
  BarrierSpacing barriers;   // whether the next Barrier's agreement is deferred (mpi_barrier.cpp), under meet
  bool borrowed = false;     // the shared one-member handles (each rank's MPI_COMM_SELF)
  bool at_record = false;    // made at its creating record, freed at its MPI_Comm_free
  // Under mu: the file communicator; for at_record ones an MPI_Comm_idup in
  // flight (completed at the first use), receives posted and not completed
  // (a free waits for them: MPICH's comm/cmfree2 completes one after the free).
  std::unique_ptr<std::mutex> mu = std::make_unique<std::mutex>();
  std::condition_variable made;  // an idup posted by the last of this process's members
  uint32_t local_members = 0, idup_arrived = 0;
  std::vector<MPI_Request> idups;
  bool idup_pending = false;
  int open_receives = 0;
  bool free_when_idle = false;
  int32_t proc_rank(int32_t world_proc) const;
};

class MpiBackend final : public Backend {
 public:
  // Makes the communicators (collective over MPI_COMM_WORLD).
  MpiBackend(const trace::Plan& plan, int32_t me, int32_t procs, bool native_mpiio, const Hints& hints = {});
  ~MpiBackend() override;

  bool replays(int32_t rank) const override { return blocks_.owner(rank) == me_; }
  std::unique_ptr<MpiOps> ops(int32_t rank, ErrorLog& errors, IoReplay& io, const Target& target,
                              const std::string& who, Channels& local) override;
  uint32_t node_threads() const override { return node_threads_; }
  void all_ready() override { MPI_Barrier(MPI_COMM_WORLD); }
  std::vector<SizeLog> gather_size_logs(const std::vector<const SizeLog*>& mine) override;  // mpi_comms.cpp
  void in_turn(const std::function<void()>& setup) override;
  [[noreturn]] void fatal(const std::string& why) override;

  const trace::Plan& plan() const { return plan_; }
  const RankBlocks& blocks() const { return blocks_; }
  bool mine(int32_t plan_rank) const { return blocks_.owner(plan_rank) == me_; }
  MpiComm& comm(int32_t global) { return comms_[size_t(global)]; }
  // Every member of `global` is this process's: no MPI call needed.
  bool within(int32_t global) const {
    return comms_[size_t(global)].local_members == plan_.comms[size_t(global)].members.size();
  }
  // At a creating record (mpi_comms.cpp), on every member of `global`: the
  // last of this process's members makes it; `idup_of` >= 0: as an
  // MPI_Comm_idup of that communicator, completed by ready().
  void make(int32_t global, int32_t idup_of = -1);
  // Before a communicator's use: false when it is not made (used before its
  // creating record, or after its free); waits for an idup in flight.
  bool ready(int32_t global);
  // The communicator MPI_File_open takes (a dup of the messages' one, made by
  // the first collective open on it: every member opens); MPI_COMM_NULL
  // when a process holds several ranks (each opens alone).
  MPI_Comm file_comm(int32_t global);
  // At MPI_Comm_free, on every member: the last of this process's frees it,
  // once no receive posted on it is outstanding.
  void unmake(int32_t global);
  void receive_opened(int32_t global);
  void receive_closed(int32_t global);
  size_t comm_count() const { return comms_.size(); }
  int tag_ub() const { return tag_ub_; }
  bool one_per_rank() const { return blocks_.ranks == blocks_.procs; }
  bool native_mpiio() const { return native_; }
  FileHints& hints() { return hints_; }  // --hint: every MPI_File_open's info
  // A zero-filled buffer of at least n bytes that stays valid (MPI-IO writes only read it).
  const char* zeros(int64_t n);
  // Shared file pointers where ranks open files alone (blocks): exact with
  // one process, per process otherwise.
  SharedPointers& pointers() { return pointers_; }
  int32_t procs() const { return blocks_.procs; }
  WaitBoard& board() { return board_; }
  // Process 0's clock (mpi_lateness.hpp).
  const SharedClock& clock() const { return clock_; }

 private:
  const trace::Plan& plan_;
  RankBlocks blocks_;
  int32_t me_;
  uint32_t node_threads_ = 1;
  bool native_;
  FileHints hints_;
  int tag_ub_ = 32767;
  SharedClock clock_;
  std::vector<MpiComm> comms_;
  MpiComm self_;  // the handles one-member communicators share
  MPI_Group world_group_ = MPI_GROUP_NULL;
  void count_node_threads();
  void make_eagerly(size_t g);
  void make_now(int32_t g, int32_t idup_of);
  void free_handles(MpiComm& c);
  std::mutex zeros_mu_;
  std::vector<std::unique_ptr<char[]>> zeros_;
  int64_t zeros_size_ = 0;
  SharedPointers pointers_;
  WaitBoard board_;
};

// main's --mpi: MPI_Init_thread, the replay of this process's block, the
// merged report printed and written by rank 0. Returns the exit status.
int run_mpi_mode(const CliOptions& cli, int argc, char** argv);

}  // namespace mpior::replay
