// mpior-study: sweeps rank counts and file systems and writes one page and
// study.json (issue 65; study/).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>

#include "predict/run.hpp"
#include "study/page.hpp"
#include "study/results.hpp"
#include "study/runner.hpp"
#include "trace/format.hpp"

namespace fs = std::filesystem;
using namespace mpior;

namespace {

struct Cli {
  std::string ranks;
  std::vector<std::string> targets, sets, results, inputs;
  bool dry_run = false;
  study::Config cfg;
};

void writable_dir(const std::string& role, const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw ToolError(fmt::format("{} {}: no such directory", role, dir));
  if (!fs::is_directory(dir, ec)) throw ToolError(fmt::format("{} {}: not a directory", role, dir));
  if (access(dir.c_str(), W_OK | X_OK) != 0) throw ToolError(fmt::format("{} {}: not writable", role, dir));
}

study::Config configure(Cli& cli) {
  study::Config c = cli.cfg;
  c.ranks = study::parse_ranks(cli.ranks);
  for (const std::string& t : cli.targets) {
    c.targets.push_back(study::parse_target(t));
    for (size_t i = 0; i + 1 < c.targets.size(); ++i)
      if (c.targets[i].name == c.targets.back().name)
        throw ToolError(fmt::format("--target {}: the name is given twice", t));
    writable_dir("--target " + c.targets.back().name, c.targets.back().dir);
    c.targets.back().dir = fs::absolute(c.targets.back().dir).string();
  }
  c.settings = {study::Setting{}};
  for (const std::string& s : cli.sets) c.settings.push_back(study::parse_setting(s, int(c.settings.size())));
  for (const std::string& r : cli.results) {
    study::ResultFile f = study::parse_result(r);
    if (!fs::is_regular_file(f.path)) throw ToolError(fmt::format("--result {}: no such file", r));
    c.results[f.id()] = f.path;
  }
  std::error_code ec;
  fs::create_directories(c.out, ec);
  writable_dir("-o", c.out);
  if (c.reference.empty()) {
    c.reference = (fs::path(c.out) / "reference").string();
    fs::create_directories(c.reference);
  }
  writable_dir("--reference", c.reference);
  c.reference = fs::absolute(c.reference).string();
  return c;
}

nlohmann::json study_json(const study::Config& c, const std::vector<study::Input>& in, const study::Runner& r,
                          nlohmann::json judged) {
  judged["tool"] = "mpior-study";
  nlohmann::json inputs = nlohmann::json::array(), targets = nlohmann::json::array(), sets = nlohmann::json::array();
  for (const study::Input& i : in) inputs.push_back({{"dir", i.dir}, {"plan", i.plan}, {"ranks", i.ranks}});
  for (const study::Target& t : c.targets) targets.push_back({{"name", t.name}, {"dir", t.dir}});
  for (const study::Setting& s : c.settings)
    sets.push_back({{"name", s.name},
                    {"label", s.label},
                    {"cb_buffer_size", s.cb_buffer_size},
                    {"cb_nodes", s.cb_nodes},
                    {"striping_unit", s.striping_unit},
                    {"striping_factor", s.striping_factor},
                    {"romio_min_fdomain_size", s.min_fdomain_size},
                    {"cb_config_list", s.cb_nodes > 0 ? s.config_list() : ""},
                    {"romio_cb_read", s.cb_read.empty() ? "automatic" : s.cb_read},
                    {"romio_cb_write", s.cb_write.empty() ? "automatic" : s.cb_write},
                    {"romio_ds_read", s.ds_read.empty() ? "automatic" : s.ds_read},
                    {"romio_ds_write", s.ds_write.empty() ? "automatic" : s.ds_write},
                    {"ind_rd_buffer_size", s.ind_rd_buffer_size},
                    {"ind_wr_buffer_size", s.ind_wr_buffer_size}});
  judged["inputs"] = inputs;
  judged["targets"] = targets;
  judged["settings"] = sets;
  judged["reference"] = c.reference;
  judged["ranks"] = r.work().ranks;
  judged["max_threads"] = c.max_threads;
  judged["budget_s"] = c.budget_s;
  return judged;
}

void write_text(const std::string& path, const std::string& text) {
  trace::write_file_atomic(path, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

// Says how much the budget cut: points not run and points stopped.
void print_budget(const study::Config& c, const nlohmann::json& j) {
  int over = 0, stopped = 0;
  for (const char* part : {"trust", "points"})
    for (const nlohmann::json& p : j[part])
      if (p["status"] == "over_budget") {
        ++over;
        stopped += !p["errors"].empty();
      }
  if (over > 0)
    fmt::print(
        "mpior-study: the budget of {} s ran out: {} points over budget, {} stopped while running; they are "
        "marked in study.json and run again by the same command with a larger --budget\n",
        c.budget_s, over, stopped);
}

void add_options(CLI::App& app, Cli& cli) {
  app.add_option("INPUT", cli.inputs, "trace or plan directories of one program at three or more rank counts")
      ->required();
  app.add_option("--ranks", cli.ranks, "rank counts to study, comma separated (a traced count uses its own plan)")
      ->required();
  app.add_option("--target", cli.targets, "NAME=DIR: an existing directory on a file system to study")->required();
  app.add_option("-o,--output", cli.cfg.out, "study directory (made if missing; finished points resume)")->required();
  app.add_option("--reference", cli.cfg.reference,
                 "a directory on the file system the traces were taken on (default: OUTPUT/reference)");
  app.add_option("--budget", cli.cfg.budget_s,
                 "seconds for the whole study: a point running then is stopped, it and those not started are marked "
                 "over_budget")
      ->check(CLI::Range(0.0, 1e9));
  app.add_option("--max-threads", cli.cfg.max_threads,
                 "largest count replayed with threads; larger ones get an mpirun line")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("--result", cli.results, "RANKS:TARGET[:SETTING]=FILE: an MPI replay's --json report to fold in");
  app.add_option("--set", cli.sets,
                 "what-if series of ROMIO hints: cb_buffer_size=SIZE (through the max-blocksize rule), cb_nodes=N "
                 "(collective reads and writes dealt to N aggregators), and with cb_nodes: striping_unit=SIZE (file "
                 "domains aligned to it), with it striping_factor=N (Lustre: writes by ROMIO's Lustre driver), "
                 "romio_min_fdomain_size=SIZE, cb_config_list=LIST (default *:*), "
                 "romio_cb_read=MODE, romio_cb_write=MODE (automatic, enable, disable); for independent calls "
                 "through non-contiguous views romio_ds_read=MODE, romio_ds_write=MODE, ind_rd_buffer_size=SIZE, "
                 "ind_wr_buffer_size=SIZE (ROMIO's data sieving); several comma separated; "
                 "mpirun lines pass them as MPI-IO hints");
  app.add_option("--predict-repeat", cli.cfg.predict_repeat, "mpior-predict --repeat")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  app.add_option("--job-seconds", cli.cfg.job_seconds, "mpior-predict --job-seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 3600.0));
  app.add_option("--max-volume", cli.cfg.max_volume, "mpior-predict --max-volume (0: the traced volume)")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 50));
  app.add_option("--max-classes", cli.cfg.max_classes, "mpior-predict --max-classes (0: its default)")
      ->check(CLI::Range(0, 1000));
  app.add_option("--trust-error", cli.cfg.trust_error_pct,
                 "percent: traced counts must replay on the reference within this of their traced time")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1000.0));
  app.add_option("--min-error", cli.cfg.min_error_pct, "percent: the replay's interval is at least this wide")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1000.0));
  app.add_flag("--dry-run", cli.dry_run, "print the work and its estimated time; run nothing");
  app.add_flag("-q,--quiet", cli.cfg.quiet, "no progress bar");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Sweeps rank counts and file systems: a plan per count, a threaded replay and a ratio prediction per "
      "target, written as OUTPUT/study.json and OUTPUT/index.html."};
  app.name("mpior-study");
  Cli cli;
  add_options(app, cli);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    std::vector<study::Input> inputs = study::read_inputs(cli.inputs);
    if (inputs.size() < 3) throw ToolError("give traces at three or more rank counts");
    study::Config cfg = configure(cli);
    study::Runner runner(cfg, inputs);
    if (cli.dry_run) {
      fmt::print("{}", runner.dry_run());
      return 0;
    }
    predict::catch_interrupts();
    nlohmann::json judged = study::judge(runner.run(), {cfg.min_error_pct, cfg.trust_error_pct});
    nlohmann::json j = study_json(cfg, inputs, runner, std::move(judged));
    write_text((fs::path(cfg.out) / "study.json").string(), j.dump(1) + "\n");
    write_text((fs::path(cfg.out) / "index.html").string(), study::render_page(j));
    int failed = 0;
    for (const nlohmann::json& p : j["points"]) {
      if (p["status"] == "needs_mpi")
        fmt::print("run: {}\n  then add {}\n", p["mpirun"].get<std::string>(), p["result_option"].get<std::string>());
      failed += p["status"] == "failed";
    }
    fmt::print("mpior-study: wrote {}/index.html and study.json: {} points, {} failed, trust check {}\n", cfg.out,
               j["points"].size(), failed, j["trust_check"]["passed"].get<bool>() ? "passed" : "FAILED");
    print_budget(cfg, j);
    return 0;
  } catch (const predict::Interrupted& e) {
    fmt::print(stderr, "mpior-study: interrupted; finished points are kept\n");
    return 128 + e.signal;
  } catch (const std::exception& e) {
    fmt::print(stderr, "mpior-study: {}\n", e.what());
    return 1;
  }
}
