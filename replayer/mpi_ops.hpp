// One replay thread's MPI in --mpi mode: real messages and collectives on the
// plan's communicators (MpiBackend), and MPI-IO through MPI_File_*.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "replayer/backend.hpp"
#include "replayer/kind_table.hpp"
#include "replayer/mpi_mode.hpp"
#include "replayer/pending_sends.hpp"
#include "replayer/sync.hpp"
#include "replayer/topology.hpp"
#include "trace/arg_views.hpp"

namespace mpior::replay {

class MpiThreadOps final : public MpiOps {
 public:
  MpiThreadOps(MpiBackend& b, int32_t rank, ErrorLog& errors, IoReplay& io, const Target& target, std::string who,
               Channels& local);
  ~MpiThreadOps() override;

  bool replay(const trace::Event& ev, uint64_t event_no) override;
  bool complete(const trace::Event& ev, uint64_t event_no) override;
  bool member(const trace::Event& ev, uint64_t event_no) override;
  void topology(const trace::Event& ev) override;
  bool file_barrier(const trace::Event& ev, uint64_t event_no) override;
  bool native_mpiio() const override { return b_.native_mpiio(); }
  int64_t mpiio(const trace::Event& ev) override;  // mpi_file.cpp
  void mpiio_block(const trace::Event& ev) override;
  void settle() override;
  int64_t idle_until(int64_t deadline, const std::atomic<bool>& abort) override;
  bool agreement_pending() const override { return agreement_.pending(); }
  void settle_agreement(int64_t gap_end, const std::atomic<bool>& abort,
                        int64_t& lateness) override;  // mpi_barrier.cpp
  void finish() override;
  bool local(const trace::Event& ev) const override;
  // No completion under the Wait/Test left the process (none at all: a Test
  // that found nothing, which MPI mode does not call either).
  bool completions_local() const override { return completions_.remote == 0; }
  int64_t sender_wait_ns() const override { return sender_wait_ns_; }

 private:
  struct Comm {
    int32_t id = -1;  // global
    int32_t me = -1;  // this rank's rank in it
  };
  struct View {
    int64_t disp = 0, extent = 0, etype = 1;
    bool pending = false;                             // set by a view record, applied once its blocks are in
    std::vector<std::pair<int64_t, int64_t>> blocks;  // (offset, length) within one filetype
    std::vector<int64_t> before;                      // data bytes before each block
    int64_t size = 0;                                 // data bytes per filetype
    bool current = false;                             // given MPI_DISPLACEMENT_CURRENT when traced
  };
  struct File {
    MPI_File fh = MPI_FILE_NULL;
    bool collective = false;  // opened on a communicator of one process per rank
    bool sequential = false;  // MPI_MODE_SEQUENTIAL (collective only)
    uint32_t views = 0;       // views set since the open (SharedPointers)
    View view;
  };

  bool comm_of(const trace::Event& ev, int64_t local, Comm* out);
  // Each kind's replay (mpi_mode.cpp), by its op class.
  using Call = bool (MpiThreadOps::*)(const trace::Event&);
  static constexpr KindTable<Call> calls();
  bool bookkeeping(const trace::Event&) { return true; }
  bool completions_begin(const trace::Event& ev);  // Wait/Test: their completion records follow
  bool cancel(const trace::Event& ev);
  bool finalize(const trace::Event& ev);
  // A call on its communicator; one the replay cannot use was logged and passes.
  template <bool (MpiThreadOps::*F)(const trace::Event&, const Comm&)>
  bool on_comm(const trace::Event& ev) {
    Comm c;
    return !comm_of(ev, trace::mpi_args(ev).comm(), &c) || (this->*F)(ev, c);
  }
  bool send_call(const trace::Event& ev, const Comm& c);
  bool isend_call(const trace::Event& ev, const Comm& c);
  bool start_call(const trace::Event& ev, const Comm& c);
  bool recv_call(const trace::Event& ev, const Comm& c);
  bool sendrecv_call(const trace::Event& ev, const Comm& c);
  bool allcoll_call(const trace::Event& ev, const Comm& c);
  bool barrier_call(const trace::Event& ev, const Comm& c);
  bool rooted_call(const trace::Event& ev, const Comm& c);
  bool created_call(const trace::Event& ev, const Comm&) { return made(ev); }
  bool freed_call(const trace::Event& ev, const Comm& c);
  int32_t global_of(int64_t local) const;  // -1: none
  bool made(const trace::Event& ev);
  bool receive_posted(const trace::Event& ev);
  bool complete_request(const trace::Event& ev);
  int32_t member_plan_rank(int32_t global, int32_t comm_rank) const;
  // The plan rank of comm rank `comm_rank` of plan communicator `local` is
  // this process's (MPI_PROC_NULL: no partner, so no MPI either).
  bool peer_here(int64_t local, int64_t comm_rank) const;
  // Every member of plan communicator `local` is this process's.
  bool comm_here(int64_t local) const;
  // A completion record's partner is this process's (completions_local).
  void count_completion(const trace::Event& ev);
  // The replay's own messages on a communicator, beside the plan's (tags >= 0):
  // members to the root of Reduce/Gather (pruning keeps some members'
  // records, so they are messages), neighbourhood collectives, and
  // intercommunicator broadcasts.
  static constexpr int64_t kUpTag = -1, kNeighborTag = -2, kInterDownTag = -3, kOwnTags = 3;
  int tag(int64_t plan_tag, int32_t src_plan, int32_t dst_plan) const;
  // req_id > 0: a nonblocking send the trace may cancel (kept in sends_).
  void send(const Comm& c, MPI_Comm on, int32_t dst_comm_rank, int64_t app_tag, int64_t bytes, int64_t req_id = -1);
  // The traced program cancelled nonblocking send req_id (MPI_Cancel, or a
  // completion that says so): so does the replay, so the message that never
  // went does not hang the end (a send to oneself completes only when matched).
  void cancel_send(int64_t req_id);
  void settle_send(int64_t req_id);  // completed: waited for lazily, with the others
  // Tests the sends in flight; false when none is worth it (pending_sends.hpp).
  bool drive_sends();
  void receive(const Comm& c, MPI_Comm on, int32_t src_comm_rank, int64_t app_tag);
  bool receive_event(const trace::Event& ev, const Comm& c, int64_t given_src, int64_t given_tag);
  // A barrier over c that passes the members' lateness on; `own`: the
  // replay's, before a collective (its cost is lateness too).
  void agreed_barrier(const Comm& c, bool own);
  // The program's MPI_Barrier over c's processes, then the agreement.
  void barrier_then_agree(const Comm& c);
  void settle_before_agreeing();
  // op: barrier, allcoll or a one-to-all collective (root: its place in c).
  // same_bytes: every member passes `bytes` (no agreement on it needed).
  void collective(trace::OpClass op, int64_t bytes, int64_t root, const Comm& c, bool same_bytes = false);
  // partial: the root's record is followed by mpior_member records naming who to wait for.
  void rooted_up(const Comm& c, int64_t root, int64_t bytes, bool partial);
  // Messages to the out-neighbours, from the in-neighbours (a communicator
  // without a recorded topology: a collective of all its members).
  void neighborhood(const trace::Event& ev, const Comm& c);
  // A rooted collective on an intercommunicator: the root and its remote group
  // (members [begin, begin + remote)).
  void inter_rooted(const Comm& c, int64_t root, int64_t begin, int64_t remote, bool down, int64_t bytes);
  // The completion of a nonblocking or persistent collective (kReqColl): as its blocking form.
  void collective_done(const trace::Event& ev, const Comm& c);
  char* recv_buffer(int64_t n);
  void check(int rc, const char* what);

  // mpi_file.cpp
  int64_t mpiio_call(const trace::Event& ev);  // mpiio() between its barriers
  void open_file(const trace::Event& ev);
  int64_t access(const trace::Event& ev, File& f);
  int64_t data_offset(const View& v, int64_t at) const;
  void apply_view(File& f);

  MpiBackend& b_;
  // MpiOps::long_gaps at this thread's last Barrier on each communicator (BarrierSpacing).
  std::unordered_map<int32_t, uint64_t> long_gaps_at_barrier_;
  int64_t sender_wait_ns_ = 0;  // receives from other processes, before their message was posted
  // Messages between two ranks of this process: as the threads' replay
  // passes them (a message through MPICH within a process takes its global
  // lock and its in-process path: a gapless pipeline of 20,000 tokens
  // replayed in 0.09-0.10 s at one process for 0.062 s traced).
  Channels& channels_;
  struct {
    uint32_t local = 0, remote = 0;
  } completions_;         // under the current Wait/Test
  WaitBoard::Slot slot_;  // on the watchdog's board while this thread replays
  const trace::PlanRank& rank_info_;
  int32_t rank_;
  ErrorLog& errors_;
  IoReplay& io_;
  const Target& target_;
  std::string who_;
  struct Posted {
    MPI_Request req;
    SendBuffer buf;
  };
  PendingSends pending_;  // sends, completed lazily
  // Waits within the process (a message from a rank of its own, a meeting
  // of its members) call it so those sends move on.
  const std::function<bool()> drive_ = [this] { return drive_sends(); };
  DeferredAgreement agreement_;                // a Barrier's, in flight (mpi_barrier.cpp)
  std::unordered_map<int64_t, Posted> sends_;  // nonblocking sends by trace request id, until settled
  std::vector<char> rbuf_;
  std::unordered_map<int64_t, File> files_;
  int64_t view_handle_ = -1;  // a view waiting for its blocks
  Topologies topologies_;
};

}  // namespace mpior::replay
