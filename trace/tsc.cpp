#include "tsc.hpp"

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

}  // namespace mpior::trace
