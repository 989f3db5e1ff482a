// Running fio and mpior-replay as child processes, directory checks, and
// leaving nothing behind when interrupted (issue 17).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "trace/tool_error.hpp"

namespace mpior::predict {

// SIGINT or SIGTERM arrived: the child was stopped; the caller cleans up.
struct Interrupted : std::runtime_error {
  explicit Interrupted(int sig) : std::runtime_error("interrupted"), signal(sig) {}
  int signal;
};

// SIGINT/SIGTERM set a flag and stop the running child (async-signal-safe).
void catch_interrupts();
// Throws Interrupted when a signal came.
void check_interrupt();

struct Output {
  int status = 0;  // exit status, 128 + signal when killed
  std::string out, err;
  // Of the child and the children it waited for: the times it went to sleep
  // (ru_nvcsw: waiting for a device, a lock, a timer; not preemption).
  int64_t sleeps = 0;
};

// Runs argv (argv[0] looked up in PATH) in cwd with extra NAME=VALUE
// variables; stdout and stderr captured. Throws ToolError when it cannot start.
Output run_process(const std::vector<std::string>& argv, const std::string& cwd,
                   const std::vector<std::string>& env = {});

// A directory the jobs run in: an existing, writable, empty directory with
// `need` bytes free. Throws ToolError with one sentence naming `role` and the problem.
void check_directory(const std::string& role, const std::string& dir, int64_t need);

// DIR/mpior-predict-run, made for one run and removed with what it holds;
// DIR's file system synced first (syncfs), so that a run does not pay for the
// write-back of what the one before left dirty.
class Scratch {
 public:
  explicit Scratch(const std::string& dir);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace mpior::predict
