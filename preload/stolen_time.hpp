// Computation the machine took, not the program (MPIOR_STOLEN_CHECK_US): the
// time a thread waited on a run queue for a CPU (the kernel's schedstat
// run_delay) is left out of the computation the trace records, as the
// tracer's own time is. On a node whose ranks fill every core, another file
// system's kernel threads (ext4's journal and writeback) preempt them, and a
// replay on tmpfs of a trace taken on ext4 would compute that much longer.
// The replay occupies the cores as the ranks did (its waits poll), so on the
// traced file system the kernel threads preempt it again.
#pragma once

#include <cstdint>

#include "trace/event.hpp"

namespace mpior::preload::stolen {

// At MPI_Init (the clock is calibrated by then): the threshold in ticks;
// not when the node's `ranks_on_node` outnumber its CPUs: oversubscribed
// ranks wait for each other's CPU, and so will every run of that job, its
// replay's threads too.
void start(int ranks_on_node) noexcept;

// A depth-0 call after `gap_ticks` of computation: the run-queue wait since
// the last reading (at most the gap) joins the time that is not the
// program's, with what calls left out of the trace since waited; the
// reading's own time too (the call's start is taken again). Returns the
// gap's own wait, without the left-out calls'.
int64_t leave_out_of_gap(trace::RawEvent& ev, int64_t gap_ticks) noexcept;

// After a long call of `call_ticks`: a recorded call's run-queue wait
// stays in its duration; one left out of the trace (pruned, excluded) is
// computation in the trace, so its wait is left out of the next gap.
void reading_after_call(bool recorded, int64_t call_ticks) noexcept;

// What every thread's computations waited for a CPU, left out of them (ns).
int64_t total_ns() noexcept;

// In a forked child: its trace starts with nothing left out, and its thread's
// readings are its own.
void reset_after_fork() noexcept;

}  // namespace mpior::preload::stolen
