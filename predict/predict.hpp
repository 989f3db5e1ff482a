// The prediction (issue 17; io-time-prediction equations 1-2): per class,
// ratio = T_target / T_reference of its fio job's time per operation (medians of the runs); the
// predicted I/O time is the sum of ratio x traced time, with an interval from
// the runs' spreads.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "predict/jobs.hpp"
#include "predict/op_classes.hpp"

namespace mpior::predict {

struct Runs {
  std::vector<double> reference, target;  // seconds per operation, one per run (reads, writes: fio's medians)
  // The runs' means per operation: their spread is each side's run-to-run spread (empty: that of the above).
  std::vector<double> reference_mean = {}, target_mean = {};
};

struct ClassResult {
  bool measured = false;
  bool per_op_basis = false;  // count x the target's time per op: the reference's was below the ratio floor
  bool cycle_basis = false;   // a synced write or its sync: the ratio of the write's cycle (predict.cpp)
  bool extrapolated = false;  // per_op_basis because the plan was extrapolated (Classes::extrapolated)
  Runs cycle_runs;            // with cycle_basis: seconds per write and its syncs, one per run
  Runs runs;
  double ratio = 1, rel_sd = 0;  // ratio: predicted / traced; rel_sd: of one run's predicted time (predict.cpp)
  double reference_rel_sd = 0, target_rel_sd = 0;  // each side's run-to-run spread
  double ratio_rel_sd = 0;                         // the spread of the repetitions' own ratios
  double application_rel_sd = 0;                   // the application's run-to-run spread (its traced runs; 0 for one)
  double predicted_s = 0, low_s = 0, high_s = 0;
};

struct Prediction {
  std::vector<ClassResult> classes;  // as Classes::classes
  double traced_io_s = 0, predicted_io_s = 0, low_s = 0, high_s = 0;
  double fio_low_s = 0, fio_high_s = 0, target_rel_sd = 0;  // before widen_by_target_spread, and its spread
  double fio_target_rel_sd = 0;  // the target's run-to-run spread in the fio runs, traced-time-weighted
  std::vector<size_t> dominant;  // classes carrying 80% of the predicted time, largest first
  double unmeasured_s = 0;       // traced time of the classes not measured (each widens the interval)
  std::vector<size_t> spread;    // measured classes whose ratio spread (rel_sd) is over kSpreadFlag
  double high_ratio = 1;         // the largest measured ratio (not per-op classes'), 1 when none
  double width() const { return predicted_io_s > 0 ? (high_s - low_s) / predicted_io_s : 0.0; }
};

// A class whose predicted time varies more than this run to run (relative
// standard deviation) is flagged in the report: its ratio is not to be trusted alone.
inline constexpr double kSpreadFlag = 0.2;

double mean(const std::vector<double>& v);
double median(std::vector<double> v);         // 0 for none
double rel_sd(const std::vector<double>& v);  // sample standard deviation / mean, 0 for fewer than 2
// How many relative standard deviations an interval spans on each side when
// the spread comes from `samples` runs: Student's t (95%, two-sided), at
// least 2: five fio runs' spread is itself uncertain (2.78), three replays'
// more so (4.30).
double spread_factor(size_t samples);

// Measured classes from their runs; the others take the traced-time-weighted
// mean ratio of the measured ones, within the span of their ratios and 1 (it
// may scale as the measured ones or not at all): an unmeasured class's share
// of the traced time widens the interval by that much.
Prediction predict_io(const Classes& cs, const std::vector<std::optional<Runs>>& runs);

// The target's run-to-run spread of the application's own I/O (--check: the
// I/O times of the replays there) widens the interval: a short I/O phase
// varies more between runs than a second-long fio job (io-time-prediction's
// limitation), by spread_factor(runs) relative standard deviations in
// quadrature, and to at least the replays' range. Keeps the fio-only interval.
void widen_by_target_spread(Prediction& p, const std::vector<double>& runs);

struct ReportInput {
  std::string plan, reference, target, jobs_dir;  // plan: the one --check replays
  std::vector<std::string> plans;                 // every traced run's plan, as given
  int repeat = 0;
  double job_seconds = 0;
  std::optional<double> replay_io_s, replay_s;  // --check: medians of its replays
  std::vector<double> replay_io_runs;           // --check: each replay's I/O time
};

nlohmann::json report_json(const ReportInput& in, const Classes& cs, const JobPlan& jp, const Prediction& p);
std::string report_text(const ReportInput& in, const Classes& cs, const JobPlan& jp, const Prediction& p);

}  // namespace mpior::predict
