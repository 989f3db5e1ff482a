// The CPU share the traced ranks had under the kernel's autogroup scheduling
// (CONFIG_SCHED_AUTOGROUP, /proc/sys/kernel/sched_autogroup_enabled): the
// scheduler shares the CPUs fairly between sessions first, then between a
// session's threads. MPICH's launcher starts every rank in a session of its
// own, so on a machine busy with other sessions each rank got a session's
// share; the replay's rank threads, one process in its caller's session,
// shared one share between them, and ran CPU-bound file calls (tmpfs writes,
// metadata) slower than the ranks did.
#pragma once

#include <string>

namespace mpior::replay {

// Before anything else runs, with autogroup scheduling on: the replay in a
// session of its own. A process leading its process group (a shell's job)
// cannot start one: it forks, the child goes on in a new session and the
// parent only waits, passes on SIGINT, SIGTERM and SIGHUP, and exits as the
// child did (this function does not return in the parent).
void enter_own_session();

// With its own session: the session's group weighted as `ranks` sessions
// (its nice value), where the kernel allows it (raising a weight needs
// CAP_SYS_NICE). Returns what the report says of it: the scheduling group,
// or a warning beginning "warning: " when the threads share less than the
// ranks had; empty without autogroup scheduling.
std::string weight_session(int ranks);

}  // namespace mpior::replay
