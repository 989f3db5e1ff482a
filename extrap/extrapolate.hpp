// mpior-post --extrapolate N DIR...: a plan for N ranks from plans of the
// same program at three or more smaller rank counts (scalaioextrap §III-B;
// the caller reads each DIR, a plan or a trace directory: postproc::plan_of_dir). Refuses, naming the first difference,
// inputs that are not the same program, whose structure differs, or whose structural quantities no model fits exactly;
// incidental ones (incidental.hpp) take the best fit, with a warning.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "extrap/collective_io.hpp"
#include "extrap/stream_classes.hpp"
#include "trace/model.hpp"

namespace mpior::extrap {

struct Options {
  // The max-blocksize rule's buffer (blocksize.hpp): ROMIO's cb_buffer_size.
  int64_t cb_buffer_size = 16 * 1024 * 1024;
  // Incidental quantities (incidental.hpp) need an exact fit too.
  bool strict = false;
};

// The plan for `target` ranks; `warnings` (when given) gets one message per
// approximated position or file. Throws ToolError.
trace::Plan extrapolate(std::vector<Input> inputs, int64_t target, const Options& opt = {},
                        std::vector<std::string>* warnings = nullptr, CollectiveIo* collective_io = nullptr);

}  // namespace mpior::extrap
