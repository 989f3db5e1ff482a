#include "postproc/scope.hpp"

#include "trace/arg_views.hpp"
#include "trace/tool_error.hpp"

namespace mpior::postproc {

RankScope::RankScope(int32_t rank, const std::string& path, const std::vector<int32_t>& files,
                     const CommResolution& comms)
    : rank_(rank), path_(&path), files_(&files), comms_(&comms) {}

std::string RankScope::where(const trace::Event& ev, const EventPos& pos) const {
  return path() + ": " + std::string(trace::name(ev.kind)) + " (thread " + std::to_string(thread_of(pos)) + ", event " +
         std::to_string(pos.index) + ")";
}

int32_t RankScope::file(const trace::Event& ev, int slot, const EventPos& pos) const {
  int64_t local = ev.args[size_t(slot)];
  if (local == -1) return -1;
  if (local < 0 || uint64_t(local) >= files_->size())
    throw ToolError(where(ev, pos) + " names file " + std::to_string(local) + ", but the rank's file table has " +
                    std::to_string(files_->size()) + " entries");
  return (*files_)[size_t(local)];
}

int32_t RankScope::comm(const trace::Event& ev, const EventPos& pos) const {
  int64_t local = mpi_args(ev).comm();
  const auto& to_global = comms_->local_to_global[size_t(rank_)];
  if (local < 0 || uint64_t(local) >= to_global.size() || to_global[size_t(local)] < 0)
    throw ToolError(where(ev, pos) + " uses communicator " + std::to_string(local) +
                    ", which the rank's communicator table does not hold");
  return to_global[size_t(local)];
}

int32_t RankScope::position(const trace::Event& ev) const {
  return comms_->local_position[size_t(rank_)][size_t(mpi_args(ev).comm())];
}

int32_t RankScope::world_rank(int32_t global_comm, int64_t comm_rank, const trace::Event& ev, const EventPos& pos,
                              const char* what) const {
  const auto& members = comms_->comms[size_t(global_comm)].members;
  if (comm_rank < 0 || uint64_t(comm_rank) >= members.size())
    throw ToolError(where(ev, pos) + ": " + what + " " + std::to_string(comm_rank) + " is not a rank of communicator " +
                    std::to_string(global_comm) + " (" + std::to_string(members.size()) + " members)");
  return members[size_t(comm_rank)];
}

}  // namespace mpior::postproc
