#include <sched.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "preload/cpu_placement.hpp"

using mpior::preload::count_cpu_list;
using mpior::preload::current_placement;

TEST_CASE("kernel CPU lists are counted, anything else refused", "[preload][placement]") {
  CHECK(count_cpu_list("0") == 1);
  CHECK(count_cpu_list("0-3,8,10-11") == 7);
  CHECK(count_cpu_list("5-5") == 1);
  CHECK(count_cpu_list("") == 0);
  CHECK(count_cpu_list("3-1") == -1);
  CHECK(count_cpu_list("0,,2") == -1);
  CHECK(count_cpu_list("a-b") == -1);
  CHECK(count_cpu_list("-1") == -1);
  CHECK(count_cpu_list("0-3\n") == -1);  // the caller trims
}

TEST_CASE("this process's placement: its mask against the CPUs it could have", "[preload][placement]") {
  cpu_set_t set;
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  const int allowed = CPU_COUNT(&set);
  mpior::trace::CpuPlacement p = current_placement();
  CHECK(p.allowed == allowed);
  CHECK(p.online >= p.allowed);
  CHECK(p.online <= sysconf(_SC_NPROCESSORS_CONF));
  CHECK(p.bound() == (allowed < p.online));
  if (allowed > 1) {  // bound to one CPU by a thread of its own, it says so
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) {
        CPU_SET(c, &one);
        break;
      }
    REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
    mpior::trace::CpuPlacement bound = current_placement();
    REQUIRE(sched_setaffinity(0, sizeof set, &set) == 0);
    CHECK(bound.allowed == 1);
    CHECK(bound.online == p.online);
    CHECK(bound.bound());
  }
}
