// A rank killed inside a collective: a crashed job's rank that ended
// abnormally (its trace unfinished: written at a signal, by a periodic
// flush, or recovered from its crash journal) records a call only when it
// returns, so when it died in a collective its members completed (the
// launcher kills the others as soon as one rank dies), its trace lacks that
// call while theirs have it, and the collective check would refuse the job.
//
// The rank's missing trailing collectives are completed as entered: each
// is appended to the rank's stream where its trace ends, as the member that
// made most of them on that communicator called it, 0 s long (when the
// rank entered it and how long it waited are unknown). A replay runs them
// (the others' part of them was traced), and the rank's stream ends there.
// Only trailing calls are completed, and only on unfinished ranks: a
// collective missing in the middle of a trace, or from a rank that
// finished, is left for the collective check to refuse.
//
// Completed: barriers, all-to-all and one-to-all collectives at depth 0 on
// intracommunicators. Not completed (the check refuses them as before):
// communicator creation (the new communicator's table entry is unknown),
// Reduce/Gather to a root, intercommunicator and neighbourhood collectives,
// collectives inside another call.
#pragma once

#include "postproc/trace_set.hpp"

namespace mpior::postproc {

// Completes set's unfinished ranks' trailing collectives (above), recording
// each rank and communicator done in set.entered, with a warning.
void complete_entered_collectives(TraceSet& set);

}  // namespace mpior::postproc
