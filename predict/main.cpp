// mpior-predict --reference DIR --target DIR [--repeat K] [--json FILE] [--check] PLAN...
// (issue 17): the plan's I/O time predicted for the target from fio jobs per
// I/O operation class, run on both directories; several plans (traced runs of
// one program at one scale) are predicted from their median.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits.h>
#include <sched.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <new>
#include <thread>

#include "predict/jobs.hpp"
#include "predict/op_classes.hpp"
#include "predict/predict.hpp"
#include "predict/run.hpp"
#include "trace/format.hpp"

namespace fs = std::filesystem;
using namespace mpior;
using namespace mpior::predict;

namespace {

struct Cli {
  std::vector<std::string> plans;
  std::string reference, target, json, jobs_dir;
  int repeat = 5;
  bool check = false;
  int check_repeat = 3;
  JobOptions jobs;
};

std::string plan_file_of(const std::string& p) {
  return fs::is_directory(p) ? (fs::path(p) / "plan.mpior").string() : p;
}

// A program beside this one (installed, or in the build tree's `subdir`), else PATH.
std::string program_beside(const std::string& name, const std::string& subdir) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    fs::path dir = fs::path(std::string(self, size_t(n))).parent_path();
    for (fs::path p : {dir / name, dir / ".." / subdir / name})
      if (access(p.c_str(), X_OK) == 0) return p.string();
  }
  return name;
}

// One fio run of `job` in a fresh directory below dir: its JSON output (and the times fio and its jobs slept).
nlohmann::json run_fio(const std::string& job, const std::string& dir, int64_t* sleeps = nullptr) {
  Scratch scratch(dir);
  Output o = run_process({"fio", "--output-format=json", job}, scratch.path(),
                         {std::string(kDirVariable) + "=" + scratch.path()});
  if (o.status != 0)
    throw ToolError(fmt::format("fio {} in {} exited {}: {}", job, dir, o.status, o.err.substr(0, 2000)));
  nlohmann::json j = nlohmann::json::parse(o.out, nullptr, false);
  if (j.is_discarded()) throw ToolError(fmt::format("fio {}: its output is not JSON", job));
  if (sleeps) *sleeps = o.sleeps;
  return j;
}

// Seconds per operation by section: the means. A job moves the class's
// volume as the program did, so its stalls (write-back throttling, a journal
// commit) are the workload's cost, which a median drops.
std::map<std::string, double> per_op_of(const std::string& job, const nlohmann::json& out) {
  try {
    return per_op_seconds(out, 0, true);
  } catch (const std::runtime_error& e) {
    throw ToolError(fmt::format("fio {}: {}", job, e.what()));
  }
}

double section_of(const std::string& job, const std::map<std::string, double>& per_op, const std::string& section) {
  auto at = per_op.find(section);
  if (at == per_op.end() || !(at->second > 0) || !std::isfinite(at->second))
    throw ToolError(fmt::format("fio {}: no {} operations measured", job, section));
  return at->second;
}

void write_job(const Cli& cli, const std::string& name, const std::string& text) {
  std::ofstream f(fs::path(cli.jobs_dir) / name);
  f << text;
  if (!f) throw ToolError(fmt::format("cannot write {}/{}", cli.jobs_dir, name));
}

double cycle_of(const std::string& file, const std::string& dir, int32_t writers) {
  nlohmann::json out = run_fio(file, dir);
  try {
    return cycle_seconds(out, writers);
  } catch (const std::runtime_error& e) {
    throw ToolError(fmt::format("fio {}: {}", file, e.what()));
  }
}

// A paced job: in each directory (runs not counted), the unpaced cycle, then
// the cycle in step at kCalibrationMargin x that (again at that x the new
// cycle while kPaceMargin x it exceeds the period it ran at); that directory's runs use
// the job paced at kPaceMargin x the cycle in step (as the program would run
// there), kept as NAME.reference.fio and NAME.target.fio.
void pace(const Cli& cli, const Job& job, std::string files[2]) {
  for (int side = 0; side < 2; ++side) {
    const std::string& dir = side ? cli.target : cli.reference;
    std::string where = side ? "target" : "reference", name = job.name + "." + where + ".fio";
    std::string path = (fs::path(cli.jobs_dir) / name).string();
    double cycle = cycle_of(files[side], dir, job.pace_jobs), period = 0;
    // Until the cycle measured fits the calibration's period with room (a period too short leaves the step,
    // and out of step the cycle looks short): at most 3 calibration runs.
    for (int i = 0; i < 3 && cycle > 0 && kPaceMargin * cycle > period; ++i) {
      period = kCalibrationMargin * cycle;
      write_job(cli, name, paced_text(job, cycle, cli.jobs.seconds, where, kCalibrationMargin));
      cycle = std::max(cycle_of(path, dir, job.pace_jobs), cycle / kCalibrationMargin);
    }
    write_job(cli, name, paced_text(job, cycle, cli.jobs.seconds, where));
    files[side] = path;
  }
}

// CPUs this process may run on: what the machine can run at once.
int32_t cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return std::max(1, int(std::thread::hardware_concurrency()));
  return std::max(1, CPU_COUNT(&set));
}

struct MetaRun {
  double seconds_per_call = 0, calls = 0;
  int64_t sleeps = 0;
};

// One run of mpior-predict-meta with `args` in a fresh directory below dir (`file`: its job, for messages).
MetaRun run_meta(const std::string& file, const std::vector<std::string>& args, const std::string& dir) {
  Scratch scratch(dir);
  std::vector<std::string> argv{program_beside(kMetaProgram, "predict")};
  argv.insert(argv.end(), args.begin(), args.end());
  Output o = run_process(argv, scratch.path());
  nlohmann::json j = nlohmann::json::parse(o.out, nullptr, false);
  MetaRun r;
  if (j.is_object()) r = {j.value("seconds_per_call", 0.0), j.value("calls", 0.0), o.sleeps};
  if (o.status != 0 || !(r.seconds_per_call > 0))
    throw ToolError(fmt::format("{} in {} exited {}: {}", file, dir, o.status, o.err.substr(0, 2000)));
  return r;
}

// A metadata job of more workers than cores runs, on each directory, once with one worker alone (its sleeps
// counted), then with the workers bounded_workers says.
void bound_meta_by_cores(const Cli& cli, Job& job, int32_t limit) {
  if (meta_workers(job) <= limit) return;
  std::vector<std::string> one = job.meta_args;
  one[1] = "1";
  for (int side = 0; side < 2; ++side) {
    MetaRun r = run_meta(job.file(), one, side ? cli.target : cli.reference);
    bounded_workers(job, side, r.sleeps, r.calls, limit);
  }
}

// A job of more fio jobs than cores runs, on each directory, once as one fio job alone (its sleeps counted),
// then as bounded_text says (NAME.reference.fio, NAME.target.fio).
void bound_by_cores(const Cli& cli, Job& job, std::string files[2]) {
  int32_t limit = cores();
  if (!job.meta_args.empty()) return bound_meta_by_cores(cli, job, limit);
  if (fio_jobs(job) <= limit) return;
  for (int side = 0; side < 2; ++side) {
    std::string name = job.name + (side ? ".target.fio" : ".reference.fio");
    std::string path = (fs::path(cli.jobs_dir) / name).string();
    write_job(cli, name, "# probe: one fio job alone, its sleeps counted\n" + with_fio_jobs(job.text, 1));
    int64_t sleeps = 0;
    nlohmann::json out = run_fio(path, side ? cli.target : cli.reference, &sleeps);
    std::string text = bounded_text(job, side, sleeps, out, limit);
    if (text.empty()) {
      fs::remove(path);
      continue;
    }
    write_job(cli, name, text);
    files[side] = path;
  }
}

// A fio job's seconds per operation; a synced job whose run made no fsync runs again, from then on, as one
// pass without its runtime limit (one_pass_text), kept as NAME.reference.fio or NAME.target.fio.
std::map<std::string, double> fio_per_op(const Cli& cli, const JobPlan& jp, const Job& job, std::string& file,
                                         int side) {
  const std::string& dir = side ? cli.target : cli.reference;
  std::map<std::string, double> per_op = per_op_of(file, run_fio(file, dir));
  bool synced = std::any_of(job.used.begin(), job.used.end(), [&](size_t i) { return jp.section[i] == "sync"; });
  if (!synced || per_op.count("sync")) return per_op;
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string name = job.name + (side ? ".target.fio" : ".reference.fio");
  write_job(cli, name, one_pass_text(job, text));
  file = (fs::path(cli.jobs_dir) / name).string();
  return per_op_of(file, run_fio(file, dir));
}

// Runs the jobs `from` on (and those of `again`) and returns their classes' runs.
std::vector<std::optional<Runs>> measure(const Cli& cli, JobPlan& jp, const Classes& cs, size_t from = 0,
                                         const std::vector<bool>& again = {}) {
  std::vector<std::optional<Runs>> runs(cs.classes.size());
  for (size_t j = 0; j < jp.jobs.size(); ++j) {
    if (j < from && !(j < again.size() && again[j])) continue;
    Job& job = jp.jobs[j];
    std::string file = (fs::path(cli.jobs_dir) / job.file()).string(), files[2] = {file, file};
    if (job.pace_ops) pace(cli, job, files);
    bound_by_cores(cli, job, files);
    for (int k = 0; k < cli.repeat; ++k)
      for (int side = 0; side < 2; ++side) {
        const std::string& dir = side ? cli.target : cli.reference;
        std::map<std::string, double> per_op;
        if (job.meta_args.empty())
          per_op = fio_per_op(cli, jp, job, files[side], side);
        else
          per_op[job.meta_args[0]] = run_meta(job.file(), meta_args_on(job, side), dir).seconds_per_call;
        for (size_t i : job.used) {
          double s = section_of(files[side], per_op, jp.section[i]);
          if (jp.section[i] == "sync") s *= rank_sync_share(job.sync_ranks);
          if (!runs[i]) runs[i] = Runs{};
          (side ? runs[i]->target : runs[i]->reference).push_back(s);
          (side ? runs[i]->target_mean : runs[i]->reference_mean).push_back(s);
        }
      }
  }
  return runs;
}

// --check: full replays of the plan on the target (compute and communication too, so the I/O meets the
// target as the application's does, not back to back); their I/O time on time.io_s's basis: each thread's
// depth-0 file calls (POSIX, stdio, MPI-IO; not the POSIX calls replayed under an MPI-IO call, which its time
// holds). Medians of --check-repeat replays; their spread is the target's run-to-run spread.
double replay_once(const std::string& plan_file, const std::string& target, double& replay_s) {
  Scratch scratch(target);
  std::string fsdir = (fs::path(scratch.path()) / "fs").string(), json = scratch.path() + "/replay.json";
  Output o =
      run_process({program_beside("mpior-replay", "replayer"), "--quiet", "--fs", fsdir, "--json", json, plan_file},
                  scratch.path());
  if (o.status != 0)
    throw ToolError(fmt::format("--check: mpior-replay exited {}: {}", o.status, o.err.substr(0, 2000)));
  std::ifstream f(json);
  nlohmann::json r = nlohmann::json::parse(f, nullptr, false);
  if (r.is_discarded() || !r.contains("per_rank")) throw ToolError("--check: mpior-replay wrote no report");
  double io = 0;
  for (const nlohmann::json& t : r["per_rank"])
    if (t.contains("predicted")) io += t["predicted"].value("io_s", 0.0);
  replay_s = r.value("replay_s", 0.0);
  return io;
}

void replay_check(const Cli& cli, const std::string& plan_file, ReportInput& in, Prediction& p) {
  std::vector<double> whole;
  for (int k = 0; k < cli.check_repeat; ++k) {
    double s = 0;
    in.replay_io_runs.push_back(replay_once(plan_file, cli.target, s));
    whole.push_back(s);
  }
  in.replay_io_s = median(in.replay_io_runs);
  in.replay_s = median(whole);
  widen_by_target_spread(p, in.replay_io_runs);
}

void write_jobs(const Cli& cli, const JobPlan& jp) {
  fs::create_directories(cli.jobs_dir);
  for (const Job& j : jp.jobs) write_job(cli, j.file(), j.text);
}

// The plan of a traced run an extrapolated plan (in `plan_dir`) names as its
// input (a trace directory post-processed, or a plan directory): as named
// (mpior-post ran here), else beside the plan (mpior-post -o p16 t2 t3 t4
// elsewhere); "" when there is none.
std::string traced_plan_of(const std::string& input, const fs::path& plan_dir) {
  for (fs::path dir : {fs::path(input), plan_dir.parent_path() / input})
    for (fs::path p : {dir / "plan" / trace::kPlanFileName, dir / trace::kPlanFileName})
      if (fs::is_regular_file(p)) return p.string();
  return "";
}

// An extrapolated plan's classes take the ranks at once fitted to its traced runs' (fit_at_once), when
// every input has its plan where it was named; the plan's own otherwise (every rank at once).
void fit_to_inputs(Classes& cs, const trace::Plan& plan, const std::string& plan_file) {
  std::vector<std::pair<int32_t, Classes>> traced;
  fs::path plan_dir = fs::absolute(plan_file).parent_path();
  for (size_t i = 0; i < plan.extrap.inputs.size() && i < plan.extrap.input_ranks.size(); ++i) {
    std::string file = traced_plan_of(plan.extrap.inputs[i], plan_dir);
    if (file.empty()) return;
    traced.emplace_back(plan.extrap.input_ranks[i], derive_classes(trace::read_plan(file)));
  }
  fit_at_once(cs, plan.job.size, traced);
  cs.fitted_from = plan.extrap.inputs;
}

// The plans' classes as one (combine_runs); `chosen`: the median run's plan
// (the one --check replays).
Classes read_classes(const Cli& cli, std::string& chosen) {
  std::vector<Classes> runs;
  int32_t ranks = 0;
  trace::Plan first;
  for (const std::string& p : cli.plans) {
    trace::Plan plan = trace::read_plan(plan_file_of(p));
    if (!runs.empty() && plan.job.size != ranks)
      throw ToolError(
          fmt::format("{} has {} ranks, {} has {}: several plans must be traced runs of one program "
                      "at one scale",
                      p, plan.job.size, cli.plans[0], ranks));
    ranks = plan.job.size;
    runs.push_back(derive_classes(plan));
    if (runs.size() == 1) first.extrap = plan.extrap, first.job = plan.job;
  }
  size_t median_run = 0;
  Classes cs = combine_runs(runs, &median_run);
  if (cs.extrapolated) fit_to_inputs(cs, first, plan_file_of(cli.plans[0]));
  chosen = cli.plans[median_run];
  return cs;
}

// Measures the plan's jobs and predicts; then, where classes left out for their small traced share may carry
// min_share of that prediction (may_matter), measures them too (their jobs after the others', and again any
// job that gained a class) and predicts again.
Prediction measure_and_predict(const Cli& cli, JobPlan& jp, const Classes& cs) {
  std::vector<std::optional<Runs>> runs = measure(cli, jp, cs);
  Prediction p = predict_io(cs, runs);
  JobOptions more = cli.jobs;
  more.force = may_matter(cs, jp, cli.jobs, p.predicted_io_s, p.high_ratio);
  if (more.force.empty()) return p;
  JobPlan wider = plan_jobs(cs, more);
  std::vector<bool> again(jp.jobs.size(), false);
  for (size_t j = 0; j < jp.jobs.size(); ++j) {
    again[j] = wider.jobs[j].used != jp.jobs[j].used;
    Job kept = jp.jobs[j];  // as measured: paced and bounded there
    kept.used = wider.jobs[j].used;
    kept.text = wider.jobs[j].text;
    wider.jobs[j] = kept;
  }
  write_jobs(cli, wider);
  std::vector<std::optional<Runs>> added = measure(cli, wider, cs, jp.jobs.size(), again);
  for (size_t i = 0; i < runs.size(); ++i)
    if (added[i]) runs[i] = added[i];
  jp = std::move(wider);
  return predict_io(cs, runs);
}

int predict_plan(Cli& cli) {
  std::string chosen;
  Classes cs = read_classes(cli, chosen);
  std::string plan_file = fs::absolute(plan_file_of(chosen)).string();  // --check replays from a scratch directory
  JobPlan jp = plan_jobs(cs, cli.jobs);
  int64_t need = jp.space + jp.space / 5 + (int64_t(1) << 20);
  check_directory("--reference", cli.reference, need);
  check_directory("--target", cli.target, need);
  if (fs::equivalent(cli.reference, cli.target)) throw ToolError("--reference and --target are the same directory");
  if (cli.jobs_dir.empty())
    cli.jobs_dir = cli.json.empty() ? "mpior-predict-jobs" : (fs::path(cli.json).parent_path() / "fio-jobs").string();
  cli.reference = fs::absolute(cli.reference).string();  // fio runs in a subdirectory
  cli.target = fs::absolute(cli.target).string();
  cli.jobs_dir = fs::absolute(cli.jobs_dir).string();
  write_jobs(cli, jp);
  catch_interrupts();
  ReportInput in{chosen, cli.reference, cli.target, cli.jobs_dir, cli.plans, cli.repeat, cli.jobs.seconds, {}, {}, {}};
  Prediction p = measure_and_predict(cli, jp, cs);
  if (cli.check) replay_check(cli, plan_file, in, p);
  if (!cli.json.empty()) {
    std::ofstream f(cli.json);
    f << report_json(in, cs, jp, p).dump(2) << "\n";
    if (!f) throw ToolError("cannot write --json " + cli.json);
  }
  std::cout << report_text(in, cs, jp, p);
  return 0;
}

int run(Cli& cli) {
  try {
    return predict_plan(cli);
  } catch (const Interrupted& e) {
    std::cerr << "mpior-predict: interrupted; removed what the jobs wrote\n";
    return 128 + e.signal;
  } catch (const ToolError& e) {
    std::cerr << "mpior-predict: " << e.what() << "\n";
  } catch (const std::bad_alloc&) {
    std::cerr << "mpior-predict: out of memory reading " << fmt::format("{}", fmt::join(cli.plans, ", ")) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "mpior-predict: " << fmt::format("{}", fmt::join(cli.plans, ", ")) << ": " << e.what() << "\n";
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Predicts a plan's I/O time on a target file system from fio jobs per I/O operation class, "
      "run on a directory of the traced file system (--reference) and one of the target."};
  app.name("mpior-predict");
  Cli cli;
  app.add_option("PLAN", cli.plans,
                 "plan directory written by mpior-post (or the plan.mpior in it); several: traced runs of one "
                 "program at one scale, predicted from their median")
      ->required();
  app.add_option("--reference", cli.reference, "empty directory on the file system the trace was taken on")->required();
  app.add_option("--target", cli.target, "empty directory on the target file system")->required();
  app.add_option("--repeat", cli.repeat, "runs of each job on each directory")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--json", cli.json, "also write the report as JSON to FILE (job files go beside it, in fio-jobs/)");
  app.add_option("--jobs-dir", cli.jobs_dir,
                 "where to keep the fio job files (default: beside --json, or "
                 "./mpior-predict-jobs)");
  app.add_flag("--check", cli.check,
               "also replay the plan on the target (mpior-replay) and report its I/O time; the replays' spread "
               "widens the interval");
  app.add_option("--check-repeat", cli.check_repeat, "replays --check runs")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  app.add_option("--job-seconds", cli.jobs.seconds, "a job whose traced work is shorter repeats it to about this long")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 3600.0));
  app.add_option("--min-share", cli.jobs.min_share, "classes below this share of the traced I/O time are not measured")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--max-volume", cli.jobs.max_volume,
                 "bytes a rank moves in one pass of a data job (default 0: the class's traced volume; smaller is "
                 "faster and says less when it fits in the page cache where the program's did not)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t(0), int64_t(1) << 50));
  app.add_option("--max-meta-ops", cli.jobs.max_meta_ops,
                 "calls a rank makes in one pass of a metadata job (default 0: the class's traced count)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t(0), int64_t(1) << 40));
  app.add_option("--max-classes", cli.jobs.max_classes, "measure at most this many classes")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return run(cli);
}
