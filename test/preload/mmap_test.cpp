// The mapping table's handlers called in the order two threads can take
// them: an unmapping in flight (its system call done, its record not yet
// made) while another mapping lands at the address it freed. Only the
// mappings older than the unmapping are its own.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "preload/call.hpp"
#include "preload/fd_table.hpp"
#include "preload/wrapper_support.hpp"
#include "trace/arg_setters.hpp"
#include "trace/arg_views.hpp"

using namespace mpior;
using namespace mpior::preload;

namespace {

constexpr size_t kLen = 4 * 4096;

// A handler's call as a wrapper hands it over; inactive: its destructor
// records nothing (the test reads what the handler filled in).
struct HandlerCall {
  Call call;
  explicit HandlerCall(trace::Kind k) : call(make(k), 0) {}
  static trace::RawEvent make(trace::Kind k) {
    trace::RawEvent e;
    e.kind = k;
    return e;
  }
  int64_t map_id() { return trace::map_args(call.ev()).map_id(); }
  int64_t offset() { return trace::map_args(call.ev()).offset(); }
};

// A traced file of kLen bytes, open read-write.
struct TracedFile {
  std::string path;
  int fd;
  TracedFile() {
    char name[] = "/tmp/mpior-maptest-XXXXXX";
    fd = mkstemp(name);
    path = name;
    REQUIRE(fd >= 0);
    REQUIRE(ftruncate(fd, kLen) == 0);
    REQUIRE(fds().traced(fd) != nullptr);
  }
  ~TracedFile() {
    fds().forget(fd);
    close(fd);
    unlink(path.c_str());
  }
};

// A shared writable mapping of f at `at` (nullptr: anywhere), as mmap's
// wrapper records it; its id.
int64_t map(const TracedFile& f, void*& at, int64_t offset) {
  HandlerCall c(trace::Kind::mmap);
  int flags = MAP_SHARED | (at ? MAP_FIXED_NOREPLACE : 0);
  void* got = mmap(at, kLen / 2, PROT_READ | PROT_WRITE, flags, f.fd, offset);
  REQUIRE(got != MAP_FAILED);
  REQUIRE((!at || got == at));
  at = got;
  map_fd(c.call, got, kLen / 2, PROT_READ | PROT_WRITE, flags, f.fd, offset);
  REQUIRE(c.map_id() > 0);
  return c.map_id();
}

}  // namespace

TEST_CASE("an unmapping in flight ends only the mappings older than it", "[preload][mmap]") {
  set_excluded({"/proc"});
  TracedFile f;
  void* first = nullptr;
  const int64_t first_id = map(f, first, 0);

  HandlerCall unmap(trace::Kind::munmap);
  map_before_unmap(unmap.call, first, kLen / 2);  // the id limit, captured before the system call
  REQUIRE(munmap(first, kLen / 2) == 0);
  // Another thread's mapping, of another part of the file, at the freed address.
  void* second = first;
  const int64_t second_id = map(f, second, int64_t(kLen / 2));
  REQUIRE(second_id > first_id);
  map_unmap(unmap.call, 0, first, kLen / 2);
  CHECK(!unmap.call.dropped());
  CHECK(unmap.map_id() == first_id);
  CHECK(unmap.offset() == 0);

  // The second mapping is still in the table: its own munmap is its record.
  HandlerCall later(trace::Kind::munmap);
  map_before_unmap(later.call, second, kLen / 2);
  REQUIRE(munmap(second, kLen / 2) == 0);
  map_unmap(later.call, 0, second, kLen / 2);
  CHECK(!later.call.dropped());
  CHECK(later.map_id() == second_id);
  CHECK(later.offset() == int64_t(kLen / 2));
  CHECK(!map_any());
}
