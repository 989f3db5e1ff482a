// The plan's own consistency, checked before a replay starts anything: a
// rank, file or communicator number out of range would send a replay thread
// past the end of a table.
#include <string>

#include "replayer/engine.hpp"
#include "trace/tool_error.hpp"

namespace mpior::replay {

void validate_plan(const trace::Plan& plan, const std::string& name) {
  if (plan.ranks.empty()) throw ToolError(name + ": the plan has no ranks");
  for (size_t i = 0; i < plan.streams.size(); ++i)
    for (int64_t r : plan.streams[i].rank_list())
      if (r < 0 || size_t(r) >= plan.ranks.size())
        throw ToolError(name + ": stream " + std::to_string(i) + " stands for rank " + std::to_string(r) +
                        " but the plan has " + std::to_string(plan.ranks.size()) + " ranks");
  for (size_t r = 0; r < plan.ranks.size(); ++r) {
    for (int32_t g : plan.ranks[r].files)
      if (g >= int64_t(plan.files.size()))
        throw ToolError(name + ": rank " + std::to_string(r) + " maps a file to global id " + std::to_string(g) +
                        " past the plan's " + std::to_string(plan.files.size()) + " files");
    for (int32_t g : plan.ranks[r].comms)
      if (g >= int64_t(plan.comms.size()))
        throw ToolError(name + ": rank " + std::to_string(r) + " maps a communicator to global id " +
                        std::to_string(g) + " past the plan's " + std::to_string(plan.comms.size()));
  }
  for (int32_t r : plan.missing)
    if (r < 0 || size_t(r) >= plan.ranks.size())
      throw ToolError(name + ": lists rank " + std::to_string(r) + " as missing but the plan has " +
                      std::to_string(plan.ranks.size()) + " ranks");
  for (size_t c = 0; c < plan.comms.size(); ++c)
    for (int32_t m : plan.comms[c].members)
      if (m < 0 || size_t(m) >= plan.ranks.size())
        throw ToolError(name + ": communicator " + std::to_string(c) + " lists rank " + std::to_string(m) +
                        " but the plan has " + std::to_string(plan.ranks.size()) + " ranks");
}

}  // namespace mpior::replay
