#include "trace/tsc.hpp"

#include <x86intrin.h>

#include <cstdint>
#include <ctime>
#include <fstream>
#include <string>

namespace mpior::trace {

bool cpu_has_invariant_tsc() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0)
      return line.find(" constant_tsc") != std::string::npos && line.find(" nonstop_tsc") != std::string::npos;
  }
  return false;
}

MonotonicTsc monotonic_with_tsc(int tries) noexcept {
  MonotonicTsc best;
  uint64_t narrowest = UINT64_MAX;
  for (int i = 0; i < tries; ++i) {
    uint64_t a = __rdtsc();
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t b = __rdtsc();
    if (b - a < narrowest)
      narrowest = b - a, best = {int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec, (double(a) + double(b)) / 2};
  }
  return best;
}

}  // namespace mpior::trace
