// Running a study's points: plans (mpior-post --extrapolate), threaded
// replays (mpior-replay) and ratio predictions (mpior-predict), each a child
// process. Every point's result is its own JSON file under points/, written
// atomically, so a study directory with finished points resumes.
#pragma once

#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "study/spec.hpp"

namespace mpior::study {

struct Config {
  std::vector<std::string> inputs;  // trace or plan directories
  std::vector<Target> targets;
  std::string reference;  // a directory on the traced file system
  std::vector<Setting> settings;
  std::vector<int> ranks;
  int max_threads = 4096;
  double budget_s = 0;  // 0: none
  std::string out;
  int predict_repeat = 3;
  double job_seconds = 0.5;
  int64_t max_volume = 0;
  int max_classes = 0;                         // 0: mpior-predict's default
  double min_error_pct = 5;                    // the replay's interval is at least this wide
  double trust_error_pct = 25;                 // traced counts must replay within this on the reference
  std::map<std::string, std::string> results;  // point id -> its MPI replay's JSON (--result)
  bool quiet = false;
};

// An input's plan directory and its rank count (from summary.json).
struct Input {
  std::string dir, plan;
  int ranks = 0;
  double traced_s = 0;  // one rank's mean traced time
};
std::vector<Input> read_inputs(const std::vector<std::string>& dirs);

// The program `name` of this build or install: beside this executable, in
// the build tree's folder of that tool, else from PATH.
std::string find_tool(const std::string& name);

// mpior-post's options for a setting's plans (after --extrapolate N).
std::vector<std::string> post_hint_args(const Setting& s);

class Runner {
 public:
  Runner(Config cfg, std::vector<Input> inputs);
  const Work& work() const { return work_; }
  // The work list and an estimate of its time, as text.
  std::string dry_run() const;
  // Runs (or loads) every point; returns study.json's points and trust check.
  nlohmann::json run();

 private:
  std::string plan_for(const Point& p);
  nlohmann::json run_point(const Point& p, const std::string& on_dir);
  nlohmann::json replay(const Point& p, const std::string& plan, const std::string& dir);
  nlohmann::json predict(const Point& p, const std::string& plan, const std::string& dir);
  std::string mpirun_line(const Point& p) const;
  const Setting& setting_of(const Point& p) const;
  std::string point_file(const Point& p) const;
  bool over_budget() const;
  // Runs a child within the budget; throws on failure or when stopped.
  void run_tool(const std::vector<std::string>& argv, const std::string& what) const;

  Config cfg_;
  std::vector<Input> inputs_;
  Work work_;
  double start_s_ = 0;
  std::atomic<int> done_{0};
};

}  // namespace mpior::study
