#include "study/runner.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "predict/run.hpp"
#include "report/progress.hpp"
#include "study/child.hpp"
#include "study/results.hpp"
#include "trace/format.hpp"

namespace mpior::study {

namespace fs = std::filesystem;

namespace {

double now_s() { return steady_s(); }

// A child stopped because the budget ran out while it ran.
struct OverBudget : std::runtime_error {
  using std::runtime_error::runtime_error;
};

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw ToolError(fmt::format("{}: cannot read", path));
  try {
    return nlohmann::json::parse(f);
  } catch (const nlohmann::json::exception& e) {
    throw ToolError(fmt::format("{}: not JSON ({})", path, e.what()));
  }
}

void write_json(const std::string& path, const nlohmann::json& j) {
  std::string text = j.dump(1) + "\n";
  trace::write_file_atomic(path, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

// The child's last stderr line: its one-sentence refusal.
std::string last_line(const std::string& err) {
  std::string s = err;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  size_t nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

}  // namespace

void Runner::run_tool(const std::vector<std::string>& argv, const std::string& what) const {
  ChildResult o = run_child(argv, cfg_.budget_s > 0 ? start_s_ + cfg_.budget_s : 0);
  if (o.stopped) throw OverBudget(fmt::format("{} stopped: the budget of {} s ran out", what, cfg_.budget_s));
  if (o.status != 0) throw ToolError(fmt::format("{} failed (exit {}): {}", what, o.status, last_line(o.err)));
}

namespace {

// An empty scratch directory below `dir`, removed with what it holds.
struct Scratch {
  explicit Scratch(const std::string& dir, const std::string& name) : path((fs::path(dir) / name).string()) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string path;
};

// The file that moved the most bytes in the plan (summary.json lists files by bytes).
nlohmann::json dominant_file(const std::string& plan) {
  nlohmann::json s = read_json((fs::path(plan) / "summary.json").string());
  if (!s.contains("files") || s["files"].empty()) return nullptr;
  const nlohmann::json& f = s["files"][0];
  return {{"path", f.value("path", "")},
          {"bytes", f.value("bytes_written", int64_t(0)) + f.value("bytes_read", int64_t(0))}};
}

}  // namespace

std::string find_tool(const std::string& name) {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec).parent_path();
  static const std::map<std::string, std::string> folder = {
      {"mpior-post", "postproc"}, {"mpior-replay", "replayer"}, {"mpior-predict", "predict"}};
  for (const fs::path& p : {self / name, self.parent_path() / folder.at(name) / name})
    if (!ec && access(p.c_str(), X_OK) == 0) return p.string();
  return name;
}

std::vector<Input> read_inputs(const std::vector<std::string>& dirs) {
  std::vector<Input> out;
  for (const std::string& d : dirs) {
    Input in{d, "", 0, 0};
    if (fs::exists(fs::path(d) / "plan" / "plan.mpior"))
      in.plan = (fs::path(d) / "plan").string();
    else if (fs::exists(fs::path(d) / "plan.mpior"))
      in.plan = d;
    else
      throw ToolError(
          fmt::format("{}: neither a plan nor a trace directory with a plan (run mpior-post {} first)", d, d));
    nlohmann::json s = read_json((fs::path(in.plan) / "summary.json").string());
    in.ranks = s.value("ranks", 0);
    if (in.ranks < 1) throw ToolError(fmt::format("{}: summary.json names no rank count", in.plan));
    in.traced_s = s["time"].value("traced_s", 0.0) / in.ranks;
    for (const Input& o : out)
      if (o.ranks == in.ranks) throw ToolError(fmt::format("{} and {}: two traces at {} ranks", o.dir, d, in.ranks));
    out.push_back(in);
  }
  return out;
}

Runner::Runner(Config cfg, std::vector<Input> inputs) : cfg_(std::move(cfg)), inputs_(std::move(inputs)) {
  std::vector<int> traced;
  for (const Input& in : inputs_) traced.push_back(in.ranks);
  work_ = make_work(cfg_.ranks, traced, cfg_.targets, cfg_.settings, cfg_.max_threads);
}

std::string Runner::point_file(const Point& p) const {
  return (fs::path(cfg_.out) / "points" / (p.target == "reference" ? "trust-n" + std::to_string(p.ranks) : p.id()))
             .string() +
         ".json";
}

std::string Runner::mpirun_line(const Point& p) const {
  std::string dir;
  for (const Target& t : cfg_.targets)
    if (t.name == p.target) dir = t.dir;
  std::string hints;
  for (const std::string& a : setting_of(p).hint_args()) hints += a + " ";
  return fmt::format("mpirun -n {} mpior-replay --mpi {}--fs {}/mpior-study-{} --json {}.replay.json {}", p.ranks,
                     hints, dir, p.id(), p.id(),
                     (fs::absolute(cfg_.out) / "plans" / plan_name(setting_of(p), p.ranks)).string());
}

const Setting& Runner::setting_of(const Point& p) const {
  for (const Setting& s : cfg_.settings)
    if (s.name == p.setting) return s;
  return cfg_.settings.front();  // base: configure() puts it first
}

std::vector<std::string> post_hint_args(const Setting& s) {
  std::vector<std::string> argv;
  if (s.cb_buffer_size > 0) argv.insert(argv.end(), {"--cb-buffer-size", std::to_string(s.cb_buffer_size)});
  // As the mpirun line's hints: cb_config_list *:* unless given (spec.cpp).
  if (s.cb_nodes > 0)
    argv.insert(argv.end(), {"--cb-nodes", std::to_string(s.cb_nodes), "--cb-config-list", s.config_list()});
  if (s.striping_unit > 0) argv.insert(argv.end(), {"--striping-unit", std::to_string(s.striping_unit)});
  if (s.striping_factor > 0) argv.insert(argv.end(), {"--striping-factor", std::to_string(s.striping_factor)});
  if (s.lustre_co_ratio > 0) argv.insert(argv.end(), {"--romio-lustre-co-ratio", std::to_string(s.lustre_co_ratio)});
  if (s.lustre_coll_threshold >= 0)
    argv.insert(argv.end(), {"--romio-lustre-coll-threshold", std::to_string(s.lustre_coll_threshold)});
  if (!s.lustre_ds_in_coll.empty()) argv.insert(argv.end(), {"--romio-lustre-ds-in-coll", s.lustre_ds_in_coll});
  if (s.min_fdomain_size > 0) argv.insert(argv.end(), {"--romio-min-fdomain-size", std::to_string(s.min_fdomain_size)});
  if (!s.cb_read.empty()) argv.insert(argv.end(), {"--romio-cb-read", s.cb_read});
  if (!s.cb_write.empty()) argv.insert(argv.end(), {"--romio-cb-write", s.cb_write});
  if (!s.ds_read.empty()) argv.insert(argv.end(), {"--romio-ds-read", s.ds_read});
  if (!s.ds_write.empty()) argv.insert(argv.end(), {"--romio-ds-write", s.ds_write});
  if (s.ind_rd_buffer_size > 0) argv.insert(argv.end(), {"--ind-rd-buffer-size", std::to_string(s.ind_rd_buffer_size)});
  if (s.ind_wr_buffer_size > 0) argv.insert(argv.end(), {"--ind-wr-buffer-size", std::to_string(s.ind_wr_buffer_size)});
  return argv;
}

bool Runner::over_budget() const { return cfg_.budget_s > 0 && now_s() - start_s_ > cfg_.budget_s; }

std::string Runner::plan_for(const Point& p) {
  if (p.traced)
    for (const Input& in : inputs_)
      if (in.ranks == p.ranks) return in.plan;
  const Setting* s = &setting_of(p);
  std::string plan = (fs::path(cfg_.out) / "plans" / plan_name(*s, p.ranks)).string();
  if (fs::exists(fs::path(plan) / "plan.mpior")) return plan;  // written atomically: complete
  std::vector<std::string> argv = {find_tool("mpior-post"), "--extrapolate", std::to_string(p.ranks), "-o", plan};
  for (const std::string& a : post_hint_args(*s)) argv.push_back(a);
  for (const Input& in : inputs_) argv.push_back(in.plan);
  run_tool(argv, fmt::format("extrapolation to {} ranks", p.ranks));
  return plan;
}

nlohmann::json Runner::replay(const Point& p, const std::string& plan, const std::string& dir) {
  std::string json = point_file(p) + ".replay";
  Scratch fs_dir(dir, "mpior-study-" + std::to_string(getpid()) + "-replay");
  run_tool({find_tool("mpior-replay"), "--threads", std::to_string(p.ranks), "--fs", fs_dir.path, "--stdio", "null",
            "--quiet", "--json", json, plan},
           fmt::format("replay of {} ranks on {}", p.ranks, dir));
  nlohmann::json r = replay_fields(read_json(json));
  fs::remove(json);
  return r;
}

nlohmann::json Runner::predict(const Point& p, const std::string& plan, const std::string& dir) {
  std::string json = point_file(p) + ".predict";
  std::string tag = "mpior-study-" + std::to_string(getpid());
  Scratch ref(cfg_.reference, tag + "-reference"), target(dir, tag + "-target"),
      jobs((fs::path(cfg_.out) / "scratch").string(), p.id() + "-jobs");
  std::vector<std::string> argv = {find_tool("mpior-predict"),
                                   "--reference",
                                   ref.path,
                                   "--target",
                                   target.path,
                                   "--repeat",
                                   std::to_string(cfg_.predict_repeat),
                                   "--job-seconds",
                                   fmt::format("{}", cfg_.job_seconds),
                                   "--jobs-dir",
                                   jobs.path,
                                   "--json",
                                   json};
  if (cfg_.max_volume > 0) {
    argv.push_back("--max-volume");
    argv.push_back(std::to_string(cfg_.max_volume));
  }
  if (cfg_.max_classes > 0) {
    argv.push_back("--max-classes");
    argv.push_back(std::to_string(cfg_.max_classes));
  }
  argv.push_back(plan);
  run_tool(argv, fmt::format("ratio prediction of {} ranks on {}", p.ranks, dir));
  nlohmann::json r = predict_fields(read_json(json), p.ranks);
  fs::remove(json);
  return r;
}

nlohmann::json Runner::run_point(const Point& p, const std::string& on_dir) {
  nlohmann::json j = {{"id", p.id()},
                      {"setting", p.setting},
                      {"target", p.target},
                      {"ranks", p.ranks},
                      {"traced", p.traced},
                      {"status", "ok"},
                      {"errors", nlohmann::json::array()}};
  std::string file = point_file(p);
  if (fs::exists(file)) {
    nlohmann::json old = read_json(file);
    if (old.value("status", "") == "ok") return old;  // resumed: finished before
  }
  if (over_budget()) {
    j["status"] = "over_budget";  // not stored: a later run with more budget does it
    return j;
  }
  double t0 = now_s();
  try {
    std::string plan = plan_for(p);
    j["plan"] = plan;
    j["dominant_file"] = dominant_file(plan);
    if (p.mpi) {
      auto given = cfg_.results.find(p.id());
      j["mpirun"] = mpirun_line(p);
      j["result_option"] = fmt::format("--result {}:{}{}={}.replay.json", p.ranks, p.target,
                                       p.setting == "base" ? "" : ":" + p.setting, p.id());
      if (given == cfg_.results.end()) {
        j["status"] = "needs_mpi";
        return j;
      }
      j["replay"] = replay_fields(read_json(given->second));
    } else {
      j["replay"] = replay(p, plan, on_dir);
    }
    if (p.target != "reference") j["predict"] = predict(p, plan, on_dir);
  } catch (const OverBudget& e) {
    j["status"] = "over_budget";  // not stored, as a point not started
    j["errors"].push_back(e.what());
    j["seconds"] = now_s() - t0;
    return j;
  } catch (const ToolError& e) {
    j["status"] = "failed";
    j["errors"].push_back(e.what());
  }
  j["seconds"] = now_s() - t0;
  write_json(file, j);
  return j;
}

std::string Runner::dry_run() const {
  double longest = 0;
  for (const Input& in : inputs_) longest = std::max(longest, in.traced_s);
  std::string out;
  double est = 0;
  int plans = 0;
  for (const Setting& s : cfg_.settings)
    for (int n : work_.ranks) {
      bool traced = false;
      for (const Input& in : inputs_) traced = traced || in.ranks == n;
      if (traced) continue;
      std::string hints;
      for (const std::string& a : post_hint_args(s)) hints += " " + a;
      out += fmt::format("plan     mpior-post --extrapolate {}{} -> plans/{}\n", n, hints, plan_name(s, n));
      ++plans;
    }
  // A replay takes about the traced run's time; a prediction runs its fio jobs
  // (a few classes, both directories, each repeat) for about --job-seconds each.
  double predict_s = 3 * 2 * cfg_.predict_repeat * cfg_.job_seconds + 2;
  for (const Point& p : work_.trust) {
    out += fmt::format("replay   {} ranks on the reference (trust check)\n", p.ranks);
    est += longest + 1;
  }
  for (const Point& p : work_.points) {
    if (p.mpi) {
      out += fmt::format("mpi      {}\n", mpirun_line(p));
    } else {
      out += fmt::format("replay   {} ({} threads)\n", p.id(), p.ranks);
      est += longest + 1;
    }
    out += fmt::format("predict  {} (fio jobs)\n", p.id());
    est += predict_s;
  }
  est += plans * 2.0;
  return out + fmt::format("{} plans, {} replays, {} predictions; estimated {:.0f} s\n", plans,
                           work_.trust.size() + work_.points.size(), work_.points.size(), est);
}

nlohmann::json Runner::run() {
  fs::create_directories(fs::path(cfg_.out) / "points");
  fs::create_directories(fs::path(cfg_.out) / "plans");
  start_s_ = now_s();
  size_t total = work_.trust.size() + work_.points.size();
  report::ProgressBar bar(report::progress_wanted(cfg_.quiet), [&](double) {
    int d = done_.load();
    return report::ProgressBar::View{double(d) / double(total), fmt::format("study: {}/{} points", d, total)};
  });
  nlohmann::json trust = nlohmann::json::array(), points = nlohmann::json::array();
  for (const Point& p : work_.trust) {
    trust.push_back(run_point(p, cfg_.reference));
    ++done_;
  }
  for (const Point& p : work_.points) {
    std::string dir;
    for (const Target& t : cfg_.targets)
      if (t.name == p.target) dir = t.dir;
    points.push_back(run_point(p, dir));
    ++done_;
  }
  bar.stop();
  fs::remove_all(fs::path(cfg_.out) / "scratch");
  return {{"trust", trust}, {"points", points}};
}

}  // namespace mpior::study
