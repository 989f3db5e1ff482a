// The one error of extrapolation: inputs it refuses, with what and where.
#pragma once

#include <stdexcept>
#include <string>

namespace mpior::extrap {

class ExtrapError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace mpior::extrap
