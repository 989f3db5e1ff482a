// The one error type of mpior-post: a trace set it cannot turn into a plan.
// Messages name the file(s) or ranks at fault; main prints them once.
#pragma once

#include <stdexcept>
#include <string>

namespace mpior::postproc {

class PostError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace mpior::postproc
