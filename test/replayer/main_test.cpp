// The built mpior-replay binary, end to end: plan directory in, report and
// JSON out, and every way it refuses bad input.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test/replayer/plan_maker.hpp"

using namespace mpior::replay::testing;
using mpior::trace::Kind;

namespace {

std::string binary() {
  const char* root = std::getenv("MPIOR_BUILD_ROOT");
  return std::string(root ? root : ".") + "/replayer/mpior-replay";
}

struct Run {
  int code = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// prefix: what runs the binary (mpirun), empty for a plain run.
Run run(const TempDir& tmp, const std::string& args, const std::string& prefix = "") {
  std::string cmd = prefix + binary() + " " + args + " >" + tmp / "stdout" + " 2>" + tmp / "stderr";
  int status = std::system(cmd.c_str());
  Run r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(tmp / "stdout");
  r.err = slurp(tmp / "stderr");
  return r;
}

// Under mpirun.mpich with `procs` processes, bounded by timeout(1) (a hang fails the test).
Run run_mpi(const TempDir& tmp, int procs, const std::string& args) {
  return run(tmp, args, "timeout 60 mpirun.mpich -n " + std::to_string(procs) + " ");
}

// Two ranks writing their own files, a message and a barrier between them.
PlanMaker two_rank_plan() {
  PlanMaker pm(2, 20'000'000);
  for (int32_t r = 0; r < 2; ++r) {
    int64_t f = pm.file("/out/rank" + std::to_string(r) + ".dat", true);
    StreamMaker sm;
    sm.call(Kind::MPI_Init, mpi_args(0), 0, 1'000'000);
    sm.call(Kind::open, io_args(3, f, -1, -1, O_WRONLY | O_CREAT | O_TRUNC, 0644), 3, 1000, 1000);
    for (int i = 0; i < 8; ++i) sm.call(Kind::pwrite, io_args(3, f, 65536 * i, 65536), 65536, 500'000, 20'000);
    sm.call(Kind::close, io_args(3, f), 0);
    if (r == 0)
      sm.call(Kind::MPI_Send, mpi_args(0, 1, 3, 8));
    else
      sm.call(Kind::MPI_Recv, mpi_args(0, 0, 3, 8, 0, 0, 0, 3));
    sm.call(Kind::MPI_Barrier, mpi_args(0));
    sm.call(Kind::MPI_Finalize, mpi_args(0));
    pm.add(sm.stream(r));
  }
  return pm;
}

}  // namespace

TEST_CASE("mpior-replay replays a plan directory and writes the JSON report", "[main]") {
  TempDir tmp;
  two_rank_plan().write(tmp / "plan");
  Run r = run(tmp, "--fs " + tmp / "fs" + " --json " + tmp / "report.json" + " " + tmp / "plan");
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE(r.err.empty());
  REQUIRE_THAT(r.out, Catch::Contains("traced time") && Catch::Contains("replay time") && Catch::Contains("pwrite"));
  REQUIRE(file_size(tmp / "fs/out/rank0.dat") == 8 * 65536);
  REQUIRE(file_size(tmp / "fs/out/rank1.dat") == 8 * 65536);

  auto j = nlohmann::json::parse(slurp(tmp / "report.json"));
  REQUIRE(j["ranks"] == 2);
  REQUIRE(j["threads"] == 2);
  // To the end of the last call: 1 ms, the open's 2 us, eight 0.5 ms gaps and 20 us writes (the plan's 20 ms
  // end would count the tracer's own finalize and the exit).
  REQUIRE(j["traced_s"].get<double>() == Approx(0.005162));
  double replay = j["replay_s"].get<double>();
  REQUIRE(replay > 0.004);  // at least the eight 0.5 ms gaps
  REQUIRE(j["error_pct"].get<double>() == Approx((replay - 0.005162) / 0.005162 * 100).epsilon(1e-6));
  REQUIRE(j["per_rank"].size() == 2);
  REQUIRE(j["per_rank"][1]["rank"] == 1);
  REQUIRE(j["per_rank"][1]["replay_s"].get<double>() > 0);
  // Start-up ends at MPI_Init's return: 1 ms traced, at least that replayed (the shortest traced MPI_Init).
  REQUIRE(j["per_rank"][1]["traced_startup_s"].get<double>() == Approx(0.001));
  REQUIRE(j["per_rank"][1]["startup_s"].get<double>() >= 0.001);
  REQUIRE(j["traced_after_startup_s"].get<double>() == Approx(0.004162));
  // After start-up: the eight gaps, less what a late start-up left to pay
  // back from them (the pacer's debt); never less than the plan in all.
  double shortest_startup = 1;
  for (const auto& t : j["per_rank"]) {
    REQUIRE(t["replay_s"].get<double>() >= 0.005);
    shortest_startup = std::min(shortest_startup, t["startup_s"].get<double>());
  }
  REQUIRE(j["after_startup_s"].get<double>() >= 0.005 - shortest_startup);
  REQUIRE(j["after_startup_s"].get<double>() <= replay - 0.001);
  REQUIRE_THAT(r.out, Catch::Contains("after start-up"));
  REQUIRE_THAT(r.out, !Catch::Contains("pruned"));  // nothing was pruned

  SECTION("pruned MPI time that is a share of the traced time is a warning") {
    PlanMaker pm = two_rank_plan();
    pm.plan.pruned[size_t(Kind::MPI_Allreduce)] = {8, 20'000'000};  // 50% of the ranks' 40 ms
    pm.write(tmp / "pruned");
    Run p = run(tmp, "--fs " + tmp / "fs2" + " --json " + tmp / "pruned.json " + tmp / "pruned");
    INFO(p.err);
    REQUIRE(p.code == 0);
    REQUIRE_THAT(p.out, Catch::Contains("warning: 0.020000 s of the traced time (50% over all ranks)"));
    REQUIRE_THAT(slurp(tmp / "pruned.json"), Catch::Contains("pruned from the trace"));
  }
  REQUIRE(j["ops"]["pwrite"]["count"] == 16);
  REQUIRE(j["ops"]["pwrite"]["bytes"] == 16 * 65536);
  REQUIRE(j["ops"]["MPI_Recv"]["count"] == 1);
  REQUIRE(j["ops"]["MPI_Send"]["bytes"] == 8);
  REQUIRE(j["errors"]["count"] == 0);

  SECTION("PLAN may be the plan.mpior file itself, with the other options") {
    Run again = run(tmp,
                    "--threads 2 --timing sample --seed 3 --compute-scale 0.5 --stdio null --stall-timeout 5 "
                    "--fs " +
                        tmp / "fs" + " " + tmp / "plan/plan.mpior");
    INFO(again.err);
    REQUIRE(again.code == 0);
    REQUIRE_THAT(again.out, Catch::Contains("2 threads"));
  }
}

TEST_CASE("mpior-replay refuses bad input with one message and a non-zero exit", "[main]") {
  TempDir tmp;
  two_rank_plan().write(tmp / "plan");
  std::string fs_opt = "--fs " + tmp / "fs ";
  SECTION("--threads that does not match the plan names extrapolation") {
    Run r = run(tmp, fs_opt + "--threads 3 " + tmp / "plan");
    REQUIRE(r.code == 1);
    REQUIRE_THAT(r.err, Catch::StartsWith("mpior-replay: --threads 3") && Catch::Contains("mpior-post --extrapolate"));
    REQUIRE(!fs::exists(tmp / "fs"));  // refused before touching the target
  }
  SECTION("a corrupt plan") {
    std::string file = tmp / "plan/plan.mpior";
    std::string bytes = slurp(file);
    bytes[bytes.size() / 2] ^= 0x40;
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
    Run r = run(tmp, fs_opt + tmp / "plan");
    REQUIRE(r.code == 1);
    REQUIRE_THAT(r.err, Catch::StartsWith("mpior-replay: " + file));
    REQUIRE(r.out.empty());
  }
  SECTION("a missing plan") {
    Run r = run(tmp, fs_opt + tmp / "nowhere");
    REQUIRE(r.code == 1);
    REQUIRE_THAT(r.err, Catch::Contains(tmp / "nowhere"));
  }
  SECTION("--fs that is a file") {
    std::ofstream(tmp / "afile") << "x";
    Run r = run(tmp, "--fs " + tmp / "afile " + tmp / "plan");
    REQUIRE(r.code == 1);
    REQUIRE_THAT(r.err, Catch::StartsWith("mpior-replay: ") && Catch::Contains(tmp / "afile"));
  }
  SECTION("an unwritable --json path") {
    Run r = run(tmp, fs_opt + "--json " + tmp / "no/dir/r.json " + tmp / "plan");
    REQUIRE(r.code == 1);
    REQUIRE_THAT(r.err, Catch::Contains(tmp / "no/dir/r.json"));
    REQUIRE(r.out.empty());  // no report passed off as complete
  }
  SECTION("usage errors exit 2") {
    REQUIRE(run(tmp, tmp / "plan").code == 2);                              // no --fs
    REQUIRE(run(tmp, fs_opt + "--timing fast " + tmp / "plan").code == 2);  // not mean|sample
    REQUIRE(run(tmp, fs_opt + "--threads -4 " + tmp / "plan").code == 2);
    REQUIRE(run(tmp, fs_opt + "--bogus " + tmp / "plan").code == 2);
    REQUIRE(run(tmp, "--help").code == 0);
  }
}

TEST_CASE("mpior-replay stops a deadlocked plan with the stall message", "[main]") {
  TempDir tmp;
  PlanMaker pm(2);
  StreamMaker r0, r1;
  r0.call(Kind::MPI_Recv, mpi_args(0, 1, 9, 4, 0, 0, 1, 9));
  r1.call(Kind::write, io_args(1, 1, -1, 2), 2);  // and ends: rank 0 alone is blocked
  pm.add(r0.stream(0));
  pm.add(r1.stream(1));
  pm.write(tmp / "plan");
  Run r = run(tmp, "--stall-timeout 0.3 --fs " + tmp / "fs " + tmp / "plan");
  REQUIRE(r.code == 1);
  REQUIRE_THAT(r.err, Catch::StartsWith("mpior-replay: replay stalled") && Catch::Contains("rank 0 thread 0") &&
                          Catch::Contains("MPI_Recv"));
  REQUIRE(r.out.empty());
  // --mpi under mpirun: the watchdogs see no process move and rank 0 names
  // the blocked rank, within the timeout (not mpirun's, not never).
  Run m = run_mpi(tmp, 2, "--mpi --stall-timeout 1 --fs " + tmp / "fs-mpi " + tmp / "plan");
  REQUIRE(m.code != 0);
  REQUIRE_THAT(m.err, Catch::Contains("mpior-replay: replay stalled") && Catch::Contains("rank 0 thread 0") &&
                          Catch::Contains("MPI_Recv"));
  REQUIRE(m.out.find("replay time") == std::string::npos);  // no report passed off as complete
}

// A rendezvous send whose receiver comes 4 s later (a slower target, an
// extrapolated plan): the sender's compute gaps test it (MPI moves it only
// inside MPI calls), but not for ever: after PendingSends' kStaleGaps and
// kStaleNs they sleep, so the replay does not burn a core for the 4 s.
TEST_CASE("mpi mode: compute gaps stop polling a send long left unreceived", "[main]") {
  TempDir tmp;
  PlanMaker pm(2, 0);
  constexpr int64_t kBig = 8 << 20;  // far past MPICH's eager limit
  StreamMaker r0, r1;
  r0.call(Kind::MPI_Init, mpi_args(0), 0, 0, 1000);
  r0.call(Kind::MPI_Send, mpi_args(0, 1, 3, kBig), 0, 0, 1000);
  for (int i = 0; i < 80; ++i) r0.call(Kind::write, io_args(1, 1, -1, 2), 2, 50'000'000, 1000);
  r0.call(Kind::MPI_Finalize, mpi_args(0));
  r1.call(Kind::MPI_Init, mpi_args(0), 0, 0, 1000);
  r1.call(Kind::MPI_Recv, mpi_args(0, 0, 3, kBig, 0, 0, 0, 3), 0, 4'000'000'000, 1000);
  r1.call(Kind::MPI_Finalize, mpi_args(0));
  pm.add(r0.stream(0));
  pm.add(r1.stream(1));
  pm.write(tmp / "plan");
  auto cpu_s = [] {
    rusage u{};
    getrusage(RUSAGE_CHILDREN, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  double before = cpu_s();
  Run m = run_mpi(tmp, 2, "--mpi --fs " + tmp / "fs " + tmp / "plan");
  double used = cpu_s() - before;
  INFO(m.err);
  REQUIRE(m.code == 0);
  REQUIRE_THAT(m.out, Catch::Contains("replay time"));
  // Polling through every gap: 4 s of the sender's CPU and more; giving up:
  // the first 8 gaps (0.4 s), start-up and the final wait, well under 1 s;
  // the bound leaves room for TSan, whose start-up and instrumentation cost
  // CPU of their own on a loaded machine.
  CHECK(used < 3.0);
  WARN("CPU seconds of the whole mpirun: " << used);
}
