#include "preload/high_fd.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace mpior::preload {

int hold_high_fd(int fd) noexcept {
  if (fd < 0) return fd;
  rlimit lim{};
  long floor = getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY ? long(lim.rlim_cur) / 2 : 512;
  int high = fcntl(fd, F_DUPFD_CLOEXEC, floor);
  if (high < 0) return fd;
  close(fd);
  return high;
}

}  // namespace mpior::preload
