// The bytes an event moved between the program and a file, counted the same
// way by every consumer (summary, file sizes the replay needs, checks).
#pragma once

#include <cstdint>

#include "event.hpp"

namespace mpior::trace {

struct Transfer {
  int file_slot = arg::file;  // argument slot naming the file (file or file2)
  int64_t offset = -1;        // where it started, -1 unknown (file position)
  int64_t bytes = 0;
  bool write = false;
  bool mapped = false;  // through a memory mapping: an upper bound
  bool stdio = false;   // through a stdio stream (the kernel sees it at flush)
};

// Fills out (at most two: a copy has a read end and a write end) with what
// ev moved; returns how many. Failed calls move nothing.
int transfers(const Event& ev, Transfer out[2]);

// Whether ev stands for a call the application made itself (depth 0; an AIO
// completion when its submit was the application's), as opposed to calls a
// library made inside another intercepted call.
bool app_level(const Event& ev);

}  // namespace mpior::trace
