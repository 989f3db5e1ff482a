// Which CPUs each replay thread may run on (--bind). Unbound ranks that
// share cores lose time to the scheduler's placement, and how much varies
// from run to run: an fsync's wake-up can put two ranks on one core, where
// MPI's busy poll then waits a scheduler tick for the other.
// A replay that runs bound where the program ran bound (and free where it
// ran free) meets the same placement, not another.
#pragma once

#include <sched.h>

#include <cstdint>
#include <string>
#include <vector>

#include "trace/model.hpp"

namespace mpior::replay {

enum class BindMode {
  as_traced,  // each rank on as many CPUs as its traced mask allowed, where the traced ranks were bound
  none,       // every thread on every CPU the replay may use
  core,       // each rank on one CPU of its own
};

// Parses "auto", "none", "core"; false for anything else.
bool parse_bind_mode(const std::string& text, BindMode& mode);

struct ThreadPlacement {
  // Per thread (the order of `thread_ranks`): its CPU set, or empty: unbound.
  std::vector<cpu_set_t> sets;
  std::string text;  // what was decided and why, for the report
  bool bound() const { return !sets.empty(); }
};

// Consecutive blocks of this process's CPUs (its affinity mask), one block per
// rank in the order the ranks first appear in `thread_ranks`; the threads of a
// rank share its block. Unbound (and said why) when the ranks need more CPUs
// than the process has, and, `in_mpi_process`, when the launcher left this
// process every CPU of the node (its neighbours would pick the same ones).
ThreadPlacement place_threads(const trace::Plan& plan, const std::vector<int32_t>& thread_ranks, BindMode mode,
                              bool in_mpi_process);

// The calling thread's mask: how many CPUs, and the first (-1: unreadable).
struct ThreadCpus {
  int32_t count = 0, first = -1;
};
ThreadCpus current_thread_cpus();

}  // namespace mpior::replay
