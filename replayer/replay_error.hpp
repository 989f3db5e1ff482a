// The one exception the replayer's setup throws: a problem the user must fix
// (unusable --fs directory, a plan path escaping it, a bad flag). main prints
// it as `mpior-replay: <message>` and exits 1.
#pragma once

#include <stdexcept>

namespace mpior::replay {

class ReplayError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace mpior::replay
