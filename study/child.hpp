// A child process of the study (mpior-post, mpior-replay, mpior-predict)
// run against the study's --budget: past its deadline the child's process
// group is stopped, so a long replay cannot outlive the budget.
#pragma once

#include <string>
#include <vector>

namespace mpior::study {

struct ChildResult {
  int status = 0;        // exit status, 128 + signal when killed
  std::string err;       // its stderr
  bool stopped = false;  // stopped at the deadline
};

// Runs argv (argv[0] looked up in PATH) in its own process group, stdout
// discarded, stderr captured. At `deadline_s` (steady-clock seconds; 0: none)
// the group gets SIGTERM, then SIGKILL `grace_s` later if still there. On
// SIGINT/SIGTERM to the study (predict::catch_interrupts) the group is
// stopped the same way and predict::Interrupted thrown. Throws ToolError
// when the program cannot start.
ChildResult run_child(const std::vector<std::string>& argv, double deadline_s, double grace_s = 5);

// Steady-clock seconds, the clock of run_child's deadline.
double steady_s();

}  // namespace mpior::study
