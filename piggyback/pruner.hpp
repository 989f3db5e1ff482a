// Online pruning (thesis §2.1): decides, call by call, whether an MPI
// synchronisation can change when I/O is issued, so the trace keeps it, or
// not, so it is dropped — in a single run, with no sampling. The MPI handlers
// in preload/ ask it; it keeps the node array, the shadow communicators and
// the auxiliary messages.
//
// Decisions by dependency class:
//   point to point   the sender decides (it had I/O since it last synchronised
//                    with the receiver) and says so in the auxiliary message;
//                    the receiver logs when either side decided, and logs the
//                    send for the sender when only it did (§2.1.5);
//   all to all       one small reduction of the decisions on the shadow (a
//                    Barrier becomes that reduction);
// The collective exchanges are posted nonblocking just before the
// application's own collective and completed just after it: MPI progresses
// both in the same rounds, so a decision adds no synchronisation of its own.
//   one to all       only the root's decision travels, root to the others;
//   all to one       only the members' decisions travel, toward the root,
//                    which learns which members logged.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "aux.hpp"
#include "mpi_abi.hpp"
#include "node_array.hpp"
#include "receive_order.hpp"
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

// A decision exchange in flight. It lives on the caller's stack: MPI owns
// its buffers until end().
struct DecisionExchange {
  bool posted = false;               // false: the communicator is not pruned
  std::span<const int32_t> members;  // world ranks, in communicator rank order
  int root = -1, me = -1;            // communicator ranks (rooted collectives)
  MPI_Request req = MPI_REQUEST_NULL;
  int mine = 0, result = 0;
  char mine_byte = 0;
  std::vector<char> all;  // all to one, at the root: every member's decision
  uint64_t epoch = 0;     // nonblocking: the I/O epoch at the post
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
};

class Pruner {
 public:
  // MPI_Init, after every rank agreed on `enable`: the shadows of
  // MPI_COMM_WORLD (local id 0) and MPI_COMM_SELF (1).
  void start(bool enable, int world_rank, int world_size);
  bool active() const { return active_; }
  // MPI_Finalize: pending auxiliary sends complete, shadows are freed.
  void finish();

  // Collective over the new communicator's members (inside the creating call).
  void comm_created(int32_t comm, MPI_Comm app);
  void comm_freed(int32_t comm);
  // Pruning applies to calls on communicators with a shadow; others (made by
  // calls mpior does not wrap) are always logged, on every member alike.
  bool shadowed(int32_t comm) const { return active_ && shadows_.count(comm); }

  // Before an application send: posts its auxiliary message. `aux` carries
  // the sender's position and time; `force` (nested calls, MPI_Sendrecv)
  // logs whatever the node array says. Returns whether the sender logs.
  bool send(int32_t comm, int dest, int32_t dest_world, int tag, AuxMessage aux, bool force);
  void receive_posted(int32_t comm, MPI_Request handle, int source, int tag);
  void receive_dropped(int32_t comm, MPI_Request handle);
  // After a receive completed with (source, tag); MPI_REQUEST_NULL for a
  // blocking receive.
  Received received(int32_t comm, MPI_Request handle, int source, int32_t source_world, int tag);

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
  // Always-logged collectives (communicator creation and free) still
  // synchronise everyone.
  void synced_all(std::span<const int32_t> members) { nodes_.mark_all(members); }

  NodeArray& nodes() { return nodes_; }

 private:
  MPI_Comm shadow(int32_t comm) const;
  void release_held();

  bool active_ = false;
  int32_t me_ = 0;
  NodeArray nodes_;
  std::unordered_map<int32_t, MPI_Comm> shadows_;
  SendOrder send_order_;
  ReceiveOrder recv_order_{nullptr};
  AuxMessenger aux_;
  std::mutex held_lock_;
  std::unordered_map<uint64_t, std::unique_ptr<HeldCollective>> held_;
  std::vector<std::unique_ptr<HeldCollective>> orphans_;  // requests freed while active
};

Pruner& pruner();

// A private communicator over app's group (no attributes copied, no callback
// run); MPI_COMM_NULL for intercommunicators.
MPI_Comm make_private_comm(MPI_Comm app);

// The hot-path hook: an application I/O call happened (called for every
// recorded depth-0 file call; one relaxed store).
inline void note_io() { pruner().nodes().on_io(); }

}  // namespace mpior::piggyback
