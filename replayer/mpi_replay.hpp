// MPI events replayed as thread synchronisation (thesis §2.3): sends post,
// receives wait, collectives meet. Rooted collectives wait only where data
// flows: members of a bcast wait for the root, the root of a reduce for its
// members.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "replayer/backend.hpp"
#include "replayer/kind_table.hpp"
#include "replayer/replay_report.hpp"
#include "replayer/sync.hpp"
#include "replayer/topology.hpp"
#include "trace/event.hpp"
#include "trace/model.hpp"

namespace mpior::replay {

// What every replay thread shares: communicators, channels, barriers.
class MpiWorld {
 public:
  MpiWorld(const trace::Plan& plan, Progress& progress, uint32_t threads);
  ~MpiWorld();

  // The world rank's rank in the global communicator, -1 when not a member.
  int32_t comm_rank(int32_t comm, int32_t world_rank) const;
  const std::vector<int32_t>& members(int32_t comm) const { return plan_.comms[size_t(comm)].members; }
  size_t comm_count() const { return plan_.comms.size(); }
  Channels& channels() { return channels_; }
  // A wait on a channel whose sender is a rank a partial plan lacks
  // (trace::Plan::missing) passes at once: nothing would ever post it.
  WaitResult wait(const ChannelKey& k, Who who) {
    return absent(k.comm, k.src) ? WaitResult::ok : channels_.wait(k, who);
  }
  bool absent(int32_t comm, int32_t member) const;
  CommBarrier& barrier(int32_t comm) { return *barriers_[size_t(comm)]; }
  // The barrier of one collective instance, the seq-th collective on comm
  // (the tracer's count, the same on every member): collectives a rank's
  // threads make on one communicator meet their own instance on the other
  // ranks whatever order the threads' replay reaches them in. Made by the
  // first member to arrive, forgotten when the last arrives. Only in plans
  // whose ranks have several threads (by_instance()): with one thread per
  // rank the communicator's barrier keeps the order already.
  std::shared_ptr<CommBarrier> instance(int32_t comm, int64_t seq);
  bool by_instance() const { return by_instance_; }
  Progress& progress() { return progress_; }

 private:
  const trace::Plan& plan_;
  Progress& progress_;
  std::vector<std::vector<std::pair<int32_t, int32_t>>> ranks_of_;  // per comm: (world rank, comm rank), sorted
  std::vector<std::unique_ptr<CommBarrier>> barriers_;
  std::vector<uint32_t> present_;  // per comm: members with a trace, who meet at its barriers
  struct Instance {
    std::shared_ptr<CommBarrier> barrier;
    uint32_t arrived = 0;
  };
  bool by_instance_ = false;
  std::mutex instances_mu_;
  std::map<std::pair<int32_t, int64_t>, Instance> instances_;
  Channels channels_;
};

class MpiReplay {
 public:
  MpiReplay(MpiWorld& world, const trace::Plan& plan, int32_t rank, ErrorLog& errors, std::string who);

  // A depth-0 MPI event; false when the replay stopped (a stall or an abort).
  bool replay(const trace::Event& ev, uint64_t event_no);
  // A completion record under a Wait/Test: a receive request waits for its message.
  bool complete(const trace::Event& ev, uint64_t event_no);
  // A member record under a root's Reduce/Gather: waits for that member.
  bool member(const trace::Event& ev, uint64_t event_no);
  // A neighbour record: this rank's topology in a communicator.
  void topology(const trace::Event& ev);
  // A collective MPI-IO call: every member of the file's communicator meets.
  bool file_barrier(const trace::Event& ev, uint64_t event_no);

 private:
  struct Comm {
    int32_t id = -1;  // global
    int32_t me = -1;  // this rank's rank in it
  };
  // The event's communicator, or nullopt after logging why it cannot be used.
  std::optional<Comm> comm_of(const trace::Event& ev);
  // The communicator of local id `local` (an MPI-IO file's, MPI_COMM_WORLD).
  std::optional<Comm> comm_of(const trace::Event& ev, int64_t local);
  // Each kind's synchronisation (mpi_replay.cpp).
  using Call = bool (MpiReplay::*)(const trace::Event&, uint64_t);
  static constexpr KindTable<Call> calls();
  bool bookkeeping(const trace::Event&, uint64_t) { return true; }
  bool finalize(const trace::Event& ev, uint64_t event_no);
  // A call on its communicator; one the replay cannot use was logged and passes.
  template <bool (MpiReplay::*F)(const trace::Event&, const Comm&, uint64_t)>
  bool on_comm(const trace::Event& ev, uint64_t event_no) {
    std::optional<Comm> c = comm_of(ev);
    return !c || (this->*F)(ev, *c, event_no);
  }
  bool send(const trace::Event& ev, const Comm& c, uint64_t event_no);
  bool recv(const trace::Event& ev, const Comm& c, uint64_t event_no);
  bool sendrecv(const trace::Event& ev, const Comm& c, uint64_t event_no);
  bool start(const trace::Event& ev, const Comm& c, uint64_t event_no);
  bool meet(const trace::Event& ev, const Comm& c, uint64_t event_no);
  bool made(const trace::Event&, const Comm&, uint64_t) { return true; }
  bool receive(const trace::Event& ev, const Comm& c, int64_t src, int64_t tag, uint64_t event_no);
  // seq >= 0: the collective's instance number on c (MpiWorld::instance).
  bool barrier(const trace::Event& ev, const Comm& c, uint64_t event_no, int64_t seq = -1);
  bool rooted(const trace::Event& ev, const Comm& c, uint64_t event_no);
  bool rooted_at(const trace::Event& ev, const Comm& c, int32_t root, bool down, bool partial, uint64_t event_no);
  // Posts to the out-neighbours, waits for the in-neighbours (all members
  // meet when the plan has no topology for c).
  bool neighborhood(const trace::Event& ev, const Comm& c, uint64_t event_no);
  // A rooted collective on an intercommunicator: the root and the other group.
  bool inter_rooted(const trace::Event& ev, const Comm& c, int64_t root, int64_t begin, int64_t remote, bool down,
                    uint64_t event_no);
  std::string where(const trace::Event& ev, uint64_t event_no) const;

  MpiWorld& world_;
  const trace::PlanRank& rank_info_;
  int32_t rank_;
  ErrorLog& errors_;
  std::string who_;
  Topologies topologies_;
};

// The threads of this process synchronising among themselves.
class ThreadMpi final : public MpiOps {
 public:
  ThreadMpi(MpiWorld& world, const trace::Plan& plan, int32_t rank, ErrorLog& errors, std::string who)
      : r_(world, plan, rank, errors, std::move(who)) {}
  bool replay(const trace::Event& ev, uint64_t n) override { return r_.replay(ev, n); }
  bool complete(const trace::Event& ev, uint64_t n) override { return r_.complete(ev, n); }
  bool member(const trace::Event& ev, uint64_t n) override { return r_.member(ev, n); }
  void topology(const trace::Event& ev) override { r_.topology(ev); }
  bool file_barrier(const trace::Event& ev, uint64_t n) override { return r_.file_barrier(ev, n); }

 private:
  MpiReplay r_;
};

}  // namespace mpior::replay
