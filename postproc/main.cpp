// mpior-post DIR [-o PLAN] [--verify]   |   mpior-post --dump FILE
#include <CLI/CLI.hpp>
#include <iostream>
#include <new>

#include "dump.hpp"
#include "error.hpp"
#include "format.hpp"
#include "post.hpp"

namespace {

constexpr int kUsageError = 2;

int run(const std::string& dir, const std::string& plan, const std::string& dump, bool verify) {
  using namespace mpior;
  try {
    if (!dump.empty()) {
      postproc::dump_file(dump, std::cout);
    } else {
      std::string plan_dir = plan.empty() ? postproc::default_plan_dir(dir) : plan;
      postproc::post_process(dir, plan_dir, std::cout, std::cerr, {}, verify);
    }
    std::cout.flush();
    if (!std::cout) {
      std::cerr << "mpior-post: cannot write to standard output\n";
      return 1;
    }
    return 0;
  } catch (const postproc::PostError& e) {
    std::cerr << "mpior-post: " << e.what() << "\n";
  } catch (const trace::FormatError& e) {
    std::cerr << "mpior-post: " << e.what() << "\n";
  } catch (const std::bad_alloc&) {
    std::cerr << "mpior-post: out of memory\n";
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Turns an mpior trace directory into a replay plan (PLAN/plan.mpior, summary.txt, summary.json)."};
  app.name("mpior-post");
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "mpior-post: " + std::string(e.what()) + " (see mpior-post --help)\n";
  });
  std::string dir, plan, dump;
  auto* dir_opt = app.add_option("DIR", dir, "trace directory written by libmpior.so");
  auto* plan_opt = app.add_option("-o,--output", plan, "plan directory to write (default DIR/plan)");
  bool verify = false;
  auto* verify_flag = app.add_flag("--verify", verify,
                                   "check, before writing it, that the merged plan gives back every rank's events "
                                   "exactly (walks every event once more)");
  app.add_option("--dump", dump, "print an mpior file (rank trace, job or plan) as text")
      ->excludes(dir_opt)
      ->excludes(plan_opt)
      ->excludes(verify_flag);
  try {
    app.parse(argc, argv);
    if (dir.empty() && dump.empty()) throw CLI::RequiredError("DIR (or --dump FILE)");
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kUsageError;
  }
  return run(dir, plan, dump, verify);
}
