// mpior-post --timeline: a traced run as Chrome trace-event JSON. One process
// per rank (pid = rank + 1), one track per traced thread; every call a slice
// with its arguments; messages as arrows from the send to the receive that
// matched it (the post-processor's pairing); the members of each collective
// instance linked from its lowest rank. Loops are expanded up to max_events
// slices, shared evenly by the streams; the metadata says when that cut.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "postproc/analyze.hpp"
#include "postproc/pairing.hpp"
#include "postproc/trace_set.hpp"
#include "report/timeline_ids.hpp"

namespace mpior::postproc {

// Before move_sends_to_senders (pairs name events of the streams as read).
// Throws ToolError when the file cannot be written.
void write_trace_timeline(const std::string& file, const postproc::TraceSet& set, const postproc::Analysis& a,
                          const std::vector<postproc::MessagePair>& pairs, uint64_t max_events);

}  // namespace mpior::postproc
