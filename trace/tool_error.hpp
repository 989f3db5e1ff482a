// The one error type of mpior's tools: a problem the user must fix (bad
// input, a refused trace, an unusable directory, a flag out of range). The
// message names what is at fault; each tool's main prints it once as
// "<tool>: <message>" and exits non-zero, so a part never prints errors itself.
#pragma once

#include <stdexcept>

namespace mpior {

class ToolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace mpior
