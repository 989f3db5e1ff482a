// Sends logged on their sender's behalf (thesis §2.1.5): with online pruning
// a sender that had no I/O to pass on does not log its send, but a receiver
// that had I/O logs the receive, and with it the send, nested under the call
// that completed it, with the sender's thread, position and start time.
// Before the plan is built these sends go into the senders' own streams at
// that position, where the replay posts them.
#pragma once

#include <cstddef>

#include "postproc/comms.hpp"
#include "postproc/trace_set.hpp"

namespace mpior::postproc {

// Inserts every on-behalf send into its sender's stream (the receivers keep
// their records, nested, which nothing replays). Returns how many moved.
size_t move_sends_to_senders(TraceSet& set, const CommResolution& comms);

}  // namespace mpior::postproc
