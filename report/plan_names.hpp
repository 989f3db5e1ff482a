// The names of a plan's ranks (global paths and communicators), for the
// replay's timeline and report.
#pragma once

#include <string>
#include <vector>

#include "report/event_view.hpp"
#include "trace/model.hpp"

namespace mpior::report {

class PlanNames {
 public:
  explicit PlanNames(const trace::Plan& plan);
  // Valid while this object lives; rank must be in the plan.
  TableNames rank(int32_t r) const;

 private:
  const trace::Plan& plan_;
  std::vector<std::string> paths_;
  std::vector<const std::vector<int32_t>*> members_;
};

}  // namespace mpior::report
