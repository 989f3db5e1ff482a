// mpior-replay --timeline: the replay's own run in the form of mpior-post's
// timeline (same pids, tids, slice names and arguments), so traced and
// replayed runs open side by side; collective instances linked across ranks.
#pragma once

#include <string>

#include "replayer/replay_report.hpp"
#include "trace/model.hpp"

namespace mpior::replay {

// Throws ToolError when the file cannot be written.
void write_replay_timeline(const std::string& file, const trace::Plan& plan, const replay::Report& rep,
                           uint64_t max_events);

}  // namespace mpior::replay
