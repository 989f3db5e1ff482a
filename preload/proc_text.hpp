// Small text files (/proc, /sys) read whole at start-up, with the plain
// calls: the caller holds the tracer's re-entry guard, so they pass through
// the wrappers untraced.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <string>

namespace mpior::preload {

inline std::string read_text(const char* path) {
  std::string out;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, size_t(n));
  close(fd);
  return out;
}

}  // namespace mpior::preload
