// pid and tid of a rank's thread in our timelines: one process per rank
// (pid = rank + 1: pid 0 means the idle task to viewers), tids unique per file.
#pragma once

#include <cstdint>

namespace mpior::report {

inline int64_t timeline_pid(int64_t rank) { return rank + 1; }
inline int64_t timeline_tid(int64_t rank, int64_t thread) { return (rank + 1) * 1'000'000 + thread; }

}  // namespace mpior::report
