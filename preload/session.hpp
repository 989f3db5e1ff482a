// Lifecycle entry points of the traced process (session.cpp).
#pragma once

#include <cstdint>

namespace mpior::preload::session {

void on_load();
void on_exit();
// Writes this rank's trace now (atomically replacing an earlier one).
bool write_rank(bool finished);
uint64_t events_recorded();

}  // namespace mpior::preload::session
