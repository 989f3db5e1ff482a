// Crash recovery (trace/journal_format.hpp): a rank killed before its
// trace's last rewrite left journal files beside its rank file. Their
// records after the rank file's flush mark are folded by the tracer's
// stream builder and appended to the rank file's streams, the table entries
// made meanwhile added, and the rank file rewritten; the journal files go.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mpior::postproc {

// Recovers every rank of dir (a job of `size` ranks) that left a journal;
// what was recovered and what was lost is told in warnings. Throws nothing
// for a damaged journal: it is left in place, with a warning.
void recover_journals(const std::string& dir, int32_t size, std::vector<std::string>* warnings);

}  // namespace mpior::postproc
