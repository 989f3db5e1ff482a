// Lifecycle entry points of the traced process (session.cpp) and its trace
// writes (session_write.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mpior::preload::session {

void on_load();
void on_exit();
// Writes this rank's trace now (atomically replacing an earlier one); one
// writer at a time.
bool write_rank(bool finished);
// The flush thread's write of what the process has so far (a standalone
// program makes its directory first, and stops writing once a job started
// after it owns the directory).
bool write_periodic();
// The same without waiting for other writers: in a crash child (crash.cpp).
bool write_rank_now(bool finished);
// Async-signal-safe: waits (bounded) until no write is under way and keeps
// other writers out until release_writes().
void hold_writes() noexcept;
// In a crash child: the trace as it stands, marked unfinished (a standalone
// program's directory and job file are made then).
bool write_crash_copy();
void release_writes() noexcept;
// Waits as long as it takes until no write is under way, then keeps other
// writers out until release_writes() (spills, spill_writer.cpp).
void lock_writes() noexcept;
// Where this rank's spill segments go, and its rank; false when it may not
// spill (not traced, a child process, before MPI_Init, after the final write).
bool spill_target(std::string* path, int32_t* rank);
uint64_t events_recorded();
// A standalone program's trace and job record (at exit, and before an exec
// replaces the program: then again at exit if the exec failed); false when
// either could not be written.
bool write_standalone();
// A standalone program's or a child process's crash journal, at its first
// recorded call: its directory, the journal, then the trace so far (the
// trace file, and a standalone program's job record, running: recovery
// needs both); false when it cannot have one.
bool start_journal();
// The rank's trace encoded as write_rank would write it (empty when it
// cannot be made: the error is logged); one writer at a time. For the
// finalize aggregation (aggregate.cpp), which writes it elsewhere.
std::vector<uint8_t> encode_rank(bool finished);

}  // namespace mpior::preload::session
