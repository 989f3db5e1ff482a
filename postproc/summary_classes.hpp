// Ranks of a plan's stream whose calls the summary's totals cannot tell
// apart: an extrapolated plan generates thousands of ranks from one rule, and
// the summary walks each class once instead of each rank.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/model.hpp"

namespace mpior::postproc {

// The stream's ranks in classes (each ascending, the classes by first rank).
// Ranks share a class when every by-rank value the summary reads comes from
// the same rank variant with no per-rank term (offsets are not read: no total
// depends on where a call reads or writes) and their file tables are equally
// long; their events then differ only in the rank and in which global file
// each local file id names.
std::vector<std::vector<int64_t>> summary_rank_classes(const trace::Plan& plan, const trace::Stream& s);

}  // namespace mpior::postproc
