#include "preload/unwinder.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

using namespace mpior::preload;

namespace {
int lowest_free_fd() {
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  close(fd);
  return fd;
}
}  // namespace

TEST_CASE("the unwinder is loaded privately and keeps the low fds free", "[unwinder]") {
  const int before = lowest_free_fd();
  unwinder::load();
  CHECK(lowest_free_fd() == before);  // libunwind's pipe went above them
  void* frames[8];
  CHECK(unwinder::backtrace(frames, 8) > 1);  // this test's frames and Catch's
  // Not in the global scope: the program's C++ exceptions stay libgcc's.
  void* global = dlsym(RTLD_DEFAULT, "unw_backtrace");
  CHECK(global == nullptr);
}
