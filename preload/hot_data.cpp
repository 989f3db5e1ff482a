// The globals every recorded call reads (call.hpp, the file handlers, the
// recorder), defined together in one section of their own: the hot path
// finds them in one cache line of one page. A system call on a kernel that
// isolates its page tables without PCID empties the TLB, and each further
// page the path after it touches costs a page walk. (Defined here, not as
// inline variables in their headers: those would each be a COMDAT group of
// their own, which cannot share a section.)
#include <atomic>
#include <cstdint>

#include "preload/crash.hpp"
#include "preload/fd_table.hpp"
#include "preload/piggyback/node_array.hpp"
#include "preload/thread_state.hpp"
#include "preload/trace_clock.hpp"

// The section is aligned to 128 bytes and holds fewer: it never spans two
// pages. GCC lays a section's variables out last defined first: the
// alignment goes on the last (test/preload: "hot globals share a page").
#define MPIOR_HOT __attribute__((section("mpior_hot")))

namespace mpior::preload {
constinit MPIOR_HOT std::atomic<bool> g_recording{false};
constinit MPIOR_HOT int64_t g_stolen_check_ticks = INT64_MAX;
constinit MPIOR_HOT int64_t g_gap_check_ticks = INT64_MAX;
constinit MPIOR_HOT int64_t g_call_residual_ticks = 0;
constinit MPIOR_HOT int64_t g_call_inside_ticks = 0;
constinit MPIOR_HOT std::atomic<FdTable*> g_fds{nullptr};
constinit MPIOR_HOT std::atomic<StreamTable*> g_streams{nullptr};
}  // namespace mpior::preload

namespace mpior::preload::clock {
constinit MPIOR_HOT bool g_use_tsc = false;
}

namespace mpior::preload::crash {
constinit MPIOR_HOT std::atomic<int64_t> g_due{kDueNever};
constinit MPIOR_HOT std::atomic<int> g_pending_signal{0};
}  // namespace mpior::preload::crash

namespace mpior::piggyback {
constinit MPIOR_HOT __attribute__((aligned(128))) std::atomic<uint64_t> g_io_epoch{1};
}
