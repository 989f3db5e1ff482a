// The MPI handlers' side of online pruning (preload/piggyback/): asks the pruner
// before and after the real calls, drops the records it says need not be
// kept (counting them), and records sends logged on their sender's behalf
// and the members a rooted collective waited for.
#pragma once

#include "preload/call.hpp"
#include "preload/mpi_abi.hpp"
#include "preload/mpi_state.hpp"
#include "preload/piggyback/inline_decision.hpp"
#include "preload/piggyback/pruner.hpp"

namespace mpior::preload::mpi {

// Whether the pruner decides for calls on this communicator. Inline, as
// decides_alone: the pruned collective's path runs both on every call.
inline bool pruning(int32_t comm) noexcept { return piggyback::pruner().shadowed(comm); }
// A pruned communicator of one: the decision is this rank's own, made without
// an exchange, so the handler makes it after the call's end stamp and its
// bookkeeping is the tracer's time, not the collective's (which the replay
// charges).
inline bool decides_alone(int32_t comm) noexcept {
  return pruning(comm) && piggyback::pruner().members(comm).size() == 1;
}
// The decision on a communicator of one, after the call: what the exchange
// would decide with no one to exchange with (no member is pending but this
// rank, which pending_any skips: never logged unless nested), with its
// bookkeeping, and no copies of the members or buffers: a pruned collective
// on MPI_COMM_SELF or a split down to one rank may come every microsecond,
// and what the tracer does around it slows the program's own code beside it
// by as much as that code costs.
bool decide_alone(Call& c, int root) noexcept;

// Before a send: posts its auxiliary message; whether the sender logs it
// (always true when pruning is off, for nested calls and when forced).
bool gate_send(Call& c, int32_t comm, int dest, int tag, int64_t bytes, bool force) noexcept;
// A receive completed (MPI_REQUEST_NULL: a blocking one): whether to log it.
piggyback::Received gate_receive(Call& c, int32_t comm, MPI_Request handle, const MPI_Status& st) noexcept;
// The send a receive's sender did not log, recorded under c for it.
void record_on_behalf(Call& c, int32_t comm, const MPI_Status& st, const piggyback::AuxMessage& aux) noexcept;

// Collectives: the decision, exchanged by dependency class (root -1: all to
// all), posted after the application's call has returned and completed
// there, when it says whether to log the call.
void begin_decision(Call& c, int32_t comm, int root, piggyback::DecisionExchange& x) noexcept;
bool end_decision(Call& c, int32_t comm, piggyback::DecisionExchange& x) noexcept;
// Nonblocking collectives and persistent ones' starts (issue 11): the
// decision is posted before the application's call (null: not pruned) ...
// A persistent collective's start passes its request: the exchange made at
// its init runs (none: not pruned).
std::unique_ptr<piggyback::HeldCollective> post_collective_decision(Call& c, const RequestInfo& info,
                                                                    MPI_Request persistent = MPI_REQUEST_NULL) noexcept;
// A persistent collective's init: makes the exchange its starts run.
void init_collective_decision(const RequestInfo& info, MPI_Request request) noexcept;
// ... and held under the request it made. Returns whether the post record
// is kept now (this member's own decision, or a nested call); when not, it
// waits in `post` for the decision at the completion.
bool hold_collective_decision(std::unique_ptr<piggyback::HeldCollective> h, int rc, MPI_Request request,
                              const trace::RawEvent& post) noexcept;
// The request of a nonblocking collective completed under c: 1 keep its
// completion (after the post record, if that waited), 0 drop both, -1 no
// decision was held for it.
int settle_collective(Call& c, MPI_Request request) noexcept;
// Communicator creation and free are always logged; they give or take a
// channel key (parent_seq: the creating call's number among the parent's
// collectives).
void comm_made(int32_t parent, uint64_t parent_seq, int32_t comm, MPI_Comm app) noexcept;
void comm_unmade(int32_t comm) noexcept;
// A communicator made over a group: its members synchronised; it gets a channel key.
void comm_made_local(int32_t comm, MPI_Comm app) noexcept;

// Drops c's record, counting it (and its time, what the replay passes as
// computation) as pruned.
void prune(Call& c) noexcept;
// A rooted collective's: a member of an all-to-one one leaves its wait for
// the root out of that time (member_wait.hpp).
void prune_rooted(Call& c, const piggyback::DecisionExchange& x) noexcept;

}  // namespace mpior::preload::mpi
