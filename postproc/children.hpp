// Processes a rank started (forked children, exec'd programs: system(),
// posix_spawn, shells, wrappers such as `timeout`) wrote their traces beside
// the rank's (rank-NNNNNN.child-PID.mpior). They fold into their rank as extra
// threads: their clocks count from the rank's trace start, so each child's
// first event already sits where the child started, and their file tables
// join the rank's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "postproc/trace_set.hpp"
#include "trace/model.hpp"

namespace mpior::postproc {

// Folds `child` (a trace of a process `parent` started) into `parent`: its
// streams become threads after the parent's, its files extend the parent's
// file table, its tallies add up. With `continues` (the parent's stream of
// the thread that exec'd this program), the child's first thread continues
// that stream instead. Returns the parent's streams that now hold the child's.
std::vector<size_t> fold_child(trace::RankTrace& parent, const trace::RankTrace& child,
                               std::optional<size_t> continues = std::nullopt);

// Reads every child file in set.dir and folds it into its rank; a child of
// another job or of a rank the job does not have is left out with a warning.
// Returns the number of children folded.
size_t fold_children(TraceSet& set);

}  // namespace mpior::postproc
