// A position's timing at a rank count never traced: the mean by the timing
// models (models.hpp), the spread and histogram of the largest input scaled
// to it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trace/timing.hpp"

namespace mpior::extrap {

// Timing statistics of a position at n from the inputs' (per input: the
// merged statistics and the number of ranks they cover), scaled to `ranks`
// ranks. `formula` and `name` get the mean's model.
trace::TimeStats extrapolate_timing(const std::vector<std::pair<int64_t, trace::TimeStats>>& per_input,
                                    const std::vector<size_t>& ranks_per_input, int64_t n, size_t ranks,
                                    std::string* formula, std::string* name);

}  // namespace mpior::extrap
