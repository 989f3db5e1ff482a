// Mappings made under UCX's memory hooks (ucm): see ucm_bridge.cpp.
#pragma once

#include <cstdint>

namespace mpior::preload {

// The call depth of this thread's open mmap, munmap or mremap wrapper (0:
// none): ucm's event for the call the wrapper makes is not recorded again.
// Set by map_not_in_ucm_event, cleared by the handler of the recorded call.
constinit inline thread_local uint8_t t_map_wrapper_depth __attribute__((tls_model("initial-exec"))) = 0;

// Subscribes the mapping handlers to ucm's events when libucm is in the
// process and not yet subscribed (at load, after MPI_Init: Open MPI loads
// UCX then). Installs no hook of ucm's; harmless to call again.
void ucm_bridge_attach() noexcept;

}  // namespace mpior::preload
