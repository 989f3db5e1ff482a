// mpior-replay --html: the HTML report of a replay, traced against replayed
// time per rank included (report/html_report.hpp).
#pragma once

#include <string>

#include "replayer/replay_report.hpp"
#include "trace/model.hpp"

namespace mpior::replay {

// From the calls the replay recorded (Report::calls). Throws
// ToolError when the file cannot be written.
void write_replay_html(const std::string& file, const trace::Plan& plan, const replay::Report& rep);

}  // namespace mpior::replay
