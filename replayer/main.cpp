// mpior-replay [--threads N] --fs DIR [--json FILE] [options] PLAN
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <new>

#include "replayer/cli.hpp"
#include "replayer/engine.hpp"
#include "replayer/mpi_mode.hpp"
#include "replayer/replay_html.hpp"
#include "replayer/replay_timeline.hpp"
#include "replayer/sched_group.hpp"
#include "trace/format.hpp"
#include "trace/tool_error.hpp"

namespace {

constexpr int kUsageError = 2;

int run(const mpior::replay::CliOptions& cli) {
  using namespace mpior;
  try {
    replay::parse_hints(cli);  // refuses hints the threads cannot apply
    std::string plan_file = replay::plan_file_of(cli.plan);
    trace::Plan plan = trace::read_plan(plan_file);
    replay::check_thread_count(cli.threads, plan);
    if (!plan.missing.empty())
      std::cerr << "mpior-replay: warning: " << plan_file << " is a partial plan: " << plan.missing.size() << " of "
                << plan.ranks.size() << " ranks left no trace and are not replayed; the others meet and receive "
                << "without them\n";
    replay::ReplayOptions opt = replay::to_replay_options(cli, plan_file);
    std::string sched = replay::weight_session(int(plan.ranks.size() - plan.missing.size()));
    replay::Report report = replay::replay_plan(plan, opt);
    if (sched.starts_with("warning: "))
      report.warnings.push_back(sched.substr(9));
    else if (!sched.empty())
      report.placement += "; " + sched;
    if (!cli.json.empty()) replay::write_json(cli.json, report);
    if (!cli.timeline.empty()) replay::write_replay_timeline(cli.timeline, plan, report, cli.max_events);
    if (!cli.html.empty()) replay::write_replay_html(cli.html, plan, report);
    replay::print_text(std::cout, report);
    if (!cli.timeline.empty()) std::cout << "mpior-replay: wrote timeline " << cli.timeline << "\n";
    if (!cli.html.empty()) std::cout << "mpior-replay: wrote report " << cli.html << "\n";
    std::cout.flush();
    if (!std::cout) {
      std::cerr << "mpior-replay: cannot write to standard output\n";
      return 1;
    }
    if (std::string wrong = replay::size_failure(report); !wrong.empty()) {
      std::cerr << "mpior-replay: " << wrong << "\n";
      return 1;
    }
    return 0;
  } catch (const ToolError& e) {
    std::cerr << "mpior-replay: " << e.what() << "\n";
  } catch (const std::bad_alloc&) {
    std::cerr << "mpior-replay: out of memory replaying " << cli.plan << "\n";
  } catch (const std::exception& e) {
    // Last resort: every known failure has a message of its own above.
    std::cerr << "mpior-replay: " << cli.plan << ": cannot be replayed: " << e.what() << "\n";
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Replays an mpior plan on a target file system: one thread per rank, real I/O below --fs."};
  app.name("mpior-replay");
  mpior::replay::CliOptions cli;
  mpior::replay::add_options(app, cli);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kUsageError;
  }
  if (cli.mpi) return mpior::replay::run_mpi_mode(cli, argc, argv);
  mpior::replay::enter_own_session();  // as a launcher starts each rank
  return run(cli);
}
