// Crash recovery (trace/journal_format.hpp): a rank or a process it started
// killed before its trace's last rewrite left journal files beside its
// trace file. Their records after the trace file's flush mark are folded by
// the tracer's stream builder and appended to the file's streams, the table
// entries made meanwhile added, and the file rewritten; the journals go.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mpior::postproc {

// Recovers every rank of dir (a job of `size` ranks) and every child
// process of one that left a journal (before children fold into ranks);
// what was recovered and what was lost is told in warnings. Throws nothing
// for a damaged journal: it is left in place, with a warning.
void recover_journals(const std::string& dir, int32_t size, std::vector<std::string>* warnings);

}  // namespace mpior::postproc
