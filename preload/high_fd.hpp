// File descriptors the tracer keeps open for itself.
#pragma once

namespace mpior::preload {

// Moves an fd the tracer keeps open (the crash journal's meta file, the
// trace directory's lock) far from the low numbers, so the application gets
// the fd numbers it would get untraced: `close(0); dup(pipe)` must give 0
// (tar's child feeding gzip aborts otherwise). Closes fd; returns the new
// one, or fd itself when it cannot move it.
int hold_high_fd(int fd) noexcept;

}  // namespace mpior::preload
