// The messages of a replay, for its timeline: on each channel (communicator,
// source, destination, tag) the k-th send pairs with the k-th receive that
// completed from that source with that tag (MPI's non-overtaking rule), from
// the calls the replay recorded.
#pragma once

#include <vector>

#include "replayer/replay_report.hpp"
#include "report/plan_names.hpp"
#include "report/timeline_writer.hpp"

namespace mpior::replay {

struct ReplayMessage {
  report::FlowEnd send, recv;
};

// Pairs only what was recorded: a capped thread's later messages are left out.
std::vector<ReplayMessage> replay_messages(const replay::Report& rep, const report::PlanNames& names);

}  // namespace mpior::replay
