#include "report/plan_names.hpp"

namespace mpior::report {

PlanNames::PlanNames(const trace::Plan& plan) : plan_(plan) {
  for (const trace::PlanFile& f : plan.files) paths_.push_back(f.path);
  for (const trace::PlanComm& c : plan.comms) members_.push_back(&c.members);
}

TableNames PlanNames::rank(int32_t r) const {
  const trace::PlanRank& pr = plan_.ranks[size_t(r)];
  return TableNames(pr.files, paths_, pr.comms, members_);
}

}  // namespace mpior::report
