// Where mpior-post's long phases say how far they are (reading ranks,
// analysing, merging, writing reports): main turns it into a progress bar on
// a terminal (report/progress.hpp). Nothing by default.
#pragma once

#include <cstdint>
#include <functional>

namespace mpior::postproc {

using ProgressFn = std::function<void(const char* phase, uint64_t done, uint64_t total)>;
void set_progress(ProgressFn fn);
void report_progress(const char* phase, uint64_t done, uint64_t total);

}  // namespace mpior::postproc
