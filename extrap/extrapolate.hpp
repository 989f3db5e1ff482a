// mpior-post --extrapolate N DIR...: a plan for N ranks from plans (or trace
// directories) of the same program at three or more smaller rank counts
// (scalaioextrap §III-B). Refuses, naming the first difference, inputs that
// are not the same program, whose structure differs, or whose quantities no
// model fits exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "classes.hpp"
#include "model.hpp"

namespace mpior::extrap {

// Reads DIR: a plan directory (DIR/plan.mpior) or a trace directory, which
// is post-processed in memory. Throws PostError, FormatError.
Input load_input(const std::string& dir);

struct Options {
  // The max-blocksize rule's buffer (blocksize.hpp): ROMIO's cb_buffer_size.
  int64_t cb_buffer_size = 16 * 1024 * 1024;
};

// The plan for `target` ranks. Throws ExtrapError.
trace::Plan extrapolate(std::vector<Input> inputs, int64_t target, const Options& opt = {});

}  // namespace mpior::extrap
