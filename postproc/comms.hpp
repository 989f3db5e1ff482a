// Global communicator ids: the same communicator gets the same id on every
// member, whatever rank-local id each member gave it. Id 0 is MPI_COMM_WORLD;
// every rank's MPI_COMM_SELF gets an id of its own; a derived communicator is
// identified by (parent's global id, parent_seq, members); communicators the
// tracer did not see created (origin unknown) by members and order of first
// appearance.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "postproc/trace_set.hpp"
#include "trace/model.hpp"

namespace mpior::postproc {

struct GlobalComm {
  trace::CommOrigin origin = trace::CommOrigin::unknown;
  int32_t parent = -1;  // global id of the parent, -1 for world, self and unknown
  uint64_t parent_seq = 0;
  int32_t first_rank = 0;        // the first rank (in rank order) that named it
  std::vector<int32_t> members;  // world ranks in communicator rank order
};

struct CommResolution {
  std::vector<GlobalComm> comms;                      // by global id
  std::vector<std::vector<int32_t>> local_to_global;  // per rank: local id -> global id, -1 none
  std::vector<std::vector<int32_t>> local_position;   // per rank: local id -> the rank's position in it

  std::vector<trace::PlanComm> plan_comms() const;
};

// Throws ToolError naming the ranks and files when members disagree.
CommResolution resolve_comms(const TraceSet& set);

// "MPI_Comm_split", "MPI_Cart_create", ... for messages.
std::string creator_name(trace::CommOrigin origin);
std::string members_text(const std::vector<int32_t>& members);

}  // namespace mpior::postproc
