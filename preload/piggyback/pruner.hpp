// Online pruning (thesis §2.1): decides, call by call, whether an MPI
// synchronisation can change when I/O is issued, so the trace keeps it, or
// not, so it is dropped — in a single run, with no sampling. The MPI handlers
// in preload/ ask it; it keeps the node array, the communicators' channel
// keys and the auxiliary messages (one private communicator over
// MPI_COMM_WORLD carries them all).
//
// Decisions by dependency class:
//   point to point   the sender decides (it had I/O since it last synchronised
//                    with the receiver) and says so in the auxiliary message;
//                    the receiver logs when either side decided, and logs the
//                    send for the sender when only it did (§2.1.5);
//   all to all       one small reduction of the decisions;
//   one to all       only the root's decision travels, root to the others;
//   all to one       only the members' decisions travel, toward the root,
//                    which learns which members logged.
// The collective exchanges are posted after the application's own
// collective returned and waited at once (posted before it, their time was
// hard to tell from the call's). Where every member kept a communicator's
// collectives again and again (KeepStreak), the members keep the next ones
// without an exchange.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "preload/mpi_abi.hpp"
#include "preload/piggyback/aux.hpp"
#include "preload/piggyback/node_array.hpp"
#include "preload/piggyback/receive_order.hpp"
#include "trace/event.hpp"

namespace mpior::piggyback {

struct Received {
  bool log = true;         // keep the receive
  bool on_behalf = false;  // and log the send for its sender, who did not
  AuxMessage aux;
};

struct RootedDecision {
  bool log = true;
  bool all_members = true;              // root: every member logged its call
  std::vector<int32_t> members_logged;  // root, when not all: the comm ranks that did
};

// A communicator's blocking all-to-all and one-to-all collectives that every
// member kept, in a row (I/O before each: a write and a Barrier a step):
// past `streak` of them the members keep the next ones without exchanging a
// decision (as many as the streak, then twice as many each time the
// exchange after them keeps too, up to kLongestSkip), and a decision to
// drop starts over. Keeping more than needed only lengthens the trace (by
// repeats loop compression folds), and every member counts the same agreed
// decisions on the communicator, so all skip the same calls. An exchange
// is a second collective beside the program's, which a program that writes
// and meets in a tight loop would otherwise pay at every step.
struct KeepStreak {
  static constexpr uint32_t kLongestSkip = 1024;
  uint32_t keeps = 0;      // agreed keeps in a row
  uint32_t skip_left = 0;  // calls still to keep unasked
  uint32_t next_skip = 0;  // 0: the streak's length
  bool skip() {
    if (skip_left == 0) return false;
    --skip_left;
    return true;
  }
  void agreed(bool keep, uint32_t streak) {
    if (streak == 0) return;
    if (!keep) {
      keeps = next_skip = 0;
      return;
    }
    if (++keeps < streak) return;
    skip_left = next_skip > 0 ? next_skip : streak;
    next_skip = std::min(2 * skip_left, kLongestSkip);
  }
};

// A decision exchange in flight. It lives on the caller's stack: MPI owns
// its buffers until end().
struct DecisionExchange {
  bool posted = false;               // false: the communicator is not pruned
  std::span<const int32_t> members;  // world ranks, in communicator rank order
  int root = -1, me = -1;            // communicator ranks (rooted collectives)
  MPI_Request req = MPI_REQUEST_NULL;
  int mine = 0, result = 0;
  char mine_byte = 0;
  std::vector<char> all;         // all to one, at the root: every member's decision
  uint64_t epoch = 0;            // nonblocking: the I/O epoch at the post
  KeepStreak* streak = nullptr;  // blocking and exchanged (not kept on the streak): the communicator's
};

// A persistent collective's exchange, made with the application's
// MPI_*_init: MPI matches persistent collectives' starts by the order of
// their inits, so a program may start them in any order (MPICH's
// coll/p_order); an exchange posted per start would then meet another
// start's. It is a persistent collective too, made in the same order, and
// started with each start.
struct PersistentExchange {
  MPI_Request req = MPI_REQUEST_NULL;
  int mine = 0, result = 0;
  bool active = false;  // started, not yet completed
};

// A nonblocking collective, or one start of a persistent one, whose decision
// is in flight until the application's request completes.
struct HeldCollective {
  std::vector<int32_t> members;  // x.members points here
  DecisionExchange x;
  bool local = false;     // this member's own decision (the result is at least it)
  bool forced = false;    // a nested call: logged whatever the decision
  bool deferred = false;  // its post record waits for the decision in `post`
  trace::RawEvent post;
  std::shared_ptr<PersistentExchange> persistent;  // a persistent collective's start: its exchange
};

class Pruner {
 public:
  // MPI_Init, after every rank agreed on `enable` and `streak` (KeepStreak;
  // 0: exchange every decision): the channels of MPI_COMM_WORLD (local id 0)
  // and MPI_COMM_SELF (1).
  void start(bool enable, int world_rank, int world_size, uint32_t streak = 0);
  // Decisions exchanged, and kept on a streak without one (the trace's summary).
  uint64_t exchanged() const { return exchanged_; }
  uint64_t skipped() const { return skipped_; }
  bool active() const { return active_; }
  // MPI_Finalize: pending auxiliary sends are let go, the shadow is freed.
  void finish();

  // Inside the creating call, on every member of the new communicator. Made
  // by a call collective over a pruned intracommunicator `parent` (its
  // `parent_seq`-th collective), its channel key is derived locally from the
  // parent's, the number and the members, equal on every member: no
  // communication. Otherwise (made over a group) one small Allreduce on the
  // new communicator agrees on one.
  void comm_created(int32_t comm, MPI_Comm app, int32_t parent, uint64_t parent_seq, std::span<const int32_t> members);
  void comm_freed(int32_t comm);
  // Pruning applies to calls on communicators with a channel key; others (made by
  // calls mpior does not wrap, intercommunicators) are always logged, on every member alike.
  bool shadowed(int32_t comm) const { return active_ && (comm == last_id_ || comms_.count(comm)); }
  // A pruned communicator's members (world ranks in its rank order), without
  // MpiState's lock.
  const std::vector<int32_t>& members(int32_t comm) { return channel(comm).members; }

  // Before an application send: posts its auxiliary message. `aux` carries
  // the sender's position and time; `force` (nested calls, MPI_Sendrecv)
  // logs whatever the node array says. Returns whether the sender logs.
  bool send(int32_t comm, int dest, int tag, AuxMessage aux, bool force);
  void receive_posted(int32_t comm, MPI_Request handle, int source, int tag);
  void receive_dropped(int32_t comm, MPI_Request handle);
  // After a receive completed with (source, tag); MPI_REQUEST_NULL for a
  // blocking receive.
  Received received(int32_t comm, MPI_Request handle, int source, int tag);

  // Each begin() posts the exchange described by x (members, and root and me
  // for rooted collectives) before the application's call; the matching end()
  // completes it after the call and gives the decision.
  void all_to_all_begin(int32_t comm, DecisionExchange& x);
  bool all_to_all_end(DecisionExchange& x);
  void one_to_all_begin(int32_t comm, DecisionExchange& x);
  bool one_to_all_end(DecisionExchange& x);
  void all_to_one_begin(int32_t comm, DecisionExchange& x);
  RootedDecision all_to_one_end(DecisionExchange& x);
  // Nonblocking collectives and persistent ones' starts: the exchange is
  // posted with the application's call (so in the same order on every
  // member) and completed where its request completes, at its Wait/Test. The
  // synchronisation counts from the post: I/O between the post and the
  // completion is not ordered by it. Every member reaches one decision (the
  // root's for one to all, everyone's otherwise: a completion record lists
  // no members), so all keep or all drop the instance.
  void nonblocking_begin(int32_t comm, HeldCollective& h, bool one_to_all);
  bool nonblocking_end(HeldCollective& h);
  // Held under the application's request (handle_key) until it completes.
  void hold(uint64_t request, std::unique_ptr<HeldCollective> h);
  std::unique_ptr<HeldCollective> take_held(uint64_t request);
  // The application freed the request while active: its exchange completes
  // unseen (released at finish()).
  void drop_held(uint64_t request);
  // Persistent collectives (MPI-4) on a pruned communicator: the exchange
  // made next to the application's init, under its request's handle_key,
  // that each start's HeldCollective runs (persistent()); freed with the
  // application's request. Without MPI-4's persistent collectives, none:
  // the starts are always logged.
  void persistent_init(int32_t comm, uint64_t request, int root, bool one_to_all);
  std::shared_ptr<PersistentExchange> persistent(uint64_t request);
  void persistent_free(uint64_t request);
  // Always-logged collectives (communicator creation and free) still
  // synchronise everyone.
  void synced_all(std::span<const int32_t> members) { nodes_.mark_all(members); }

  NodeArray& nodes() { return nodes_; }

 private:
  // A pruned communicator: the key its auxiliary messages carry (equal on
  // every member) and the application's handle, on which the collective
  // decisions travel (posted next to the application's own collective, in
  // the same order on every member).
  struct Channel {
    uint64_t key = 0;
    MPI_Comm app = MPI_COMM_NULL;
    std::vector<int32_t> members;  // world ranks (no lock on the hot path)
    mutable KeepStreak streak;  // its blocking collectives' (no other thread: pruning is off with MPI_THREAD_MULTIPLE)
  };
  // Whether x is kept on c's streak; otherwise x counts towards it.
  bool on_streak(const Channel& c, DecisionExchange& x);
  const Channel& channel(int32_t comm);
  int32_t world_of(const Channel& ch, int rank) const {
    return rank >= 0 && size_t(rank) < ch.members.size() ? ch.members[size_t(rank)] : -1;
  }
  void release_held();

  bool active_ = false;
  int32_t me_ = 0;
  uint32_t streak_ = 0;
  uint64_t exchanged_ = 0, skipped_ = 0;
  NodeArray nodes_{&g_io_epoch};
  std::unordered_map<int32_t, Channel> comms_;  // node-based: pointers stay valid until erased
  int32_t last_id_ = -1;                        // the last channel looked up (most calls repeat it)
  const Channel* last_ = nullptr;
  uint64_t next_key_ = 16;               // agreed keys (Allreduce MAX); derived ones have the top bit
  MPI_Comm aux_shadow_ = MPI_COMM_NULL;  // private, over MPI_COMM_WORLD: every auxiliary message
  SendOrder send_order_;
  ReceiveOrder recv_order_{nullptr};
  AuxMessenger aux_;
  std::mutex held_lock_;
  std::unordered_map<uint64_t, std::unique_ptr<HeldCollective>> held_;
  std::vector<std::unique_ptr<HeldCollective>> orphans_;                          // requests freed while active
  std::unordered_map<uint64_t, std::shared_ptr<PersistentExchange>> persistent_;  // under held_lock_
};

// Inline: the tracer asks for it several times in each MPI call.
__attribute__((always_inline)) inline Pruner& pruner() {
  static auto* p = new Pruner();
  return *p;
}

// A private communicator over app's group (no attributes copied, no callback
// run); MPI_COMM_NULL for intercommunicators.
MPI_Comm make_private_comm(MPI_Comm app);

// The hot-path hook: an application I/O call happened (called for every
// recorded depth-0 file call; one relaxed store, without making the pruner).
inline void note_io() { g_io_epoch.store(g_io_epoch.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }

}  // namespace mpior::piggyback
