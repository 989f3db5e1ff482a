#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <catch2/catch.hpp>

#include "replayer/engine.hpp"
#include "replayer/sandbox.hpp"
#include "test/replayer/plan_maker.hpp"
#include "trace/tool_error.hpp"

using namespace mpior::replay;
using namespace mpior::replay::testing;
using mpior::trace::Kind;

namespace {

constexpr int64_t kCreate = O_WRONLY | O_CREAT | O_TRUNC;

ReplayOptions options(const std::string& root) {
  ReplayOptions opt;
  opt.setup.fs = root;
  opt.stall_timeout_s = 10;
  opt.plan_name = "test-plan";
  return opt;
}

// Rank 0: posix calls on /out; rank 1: stdio with relative paths, an input,
// and rank-local file ids that differ from rank 0's.
PlanMaker posix_and_stdio_plan() {
  PlanMaker pm(2, 1'000'000);
  pm.plan.ranks[1].cwd = "/home/u";
  int64_t data = pm.file("/out/data.bin", true);
  int64_t part = pm.file("/out/tmp.part", true);
  int64_t final_name = pm.file("/out/final", true);
  int64_t gone = pm.file("/out/gone", true);
  int64_t newdir = pm.file("/out/newdir", true, 0, true);
  int64_t results = pm.file("results/r1.txt", true);      // relative: below rank 1's cwd
  int64_t passwd = pm.file("../../../etc/passwd", true);  // climbs, and stays inside
  int64_t mesh = pm.file("/in/mesh", false, 8192);
  // Rank 1 numbers its files in another order: local 3 is results, 4 is mesh, 5 is passwd.
  auto& r1 = pm.plan.ranks[1].files;
  r1 = {0, 1, 2, int32_t(results), int32_t(mesh), int32_t(passwd)};

  StreamMaker r0;
  r0.call(Kind::open, io_args(3, data, -1, -1, kCreate, 0644), 3, 1000, 500);
  for (int i = 0; i < 4; ++i) r0.call(Kind::pwrite64, io_args(3, data, 4096 * i, 4096), 4096, 200, 100);
  r0.call(Kind::lseek, io_args(3, data, 16384, -1, SEEK_SET), 16384);
  r0.call(Kind::write, io_args(3, data, 16384, 100), 100);
  r0.call(Kind::dup, io_args(3, data, -1, -1, 0, 0, 0, 4), 4);
  r0.call(Kind::write, io_args(4, data, 16484, 50), 50);  // shares the offset with fd 3
  r0.call(Kind::read, io_args(3, data, -1, 10), -1);      // failed when traced: skipped
  r0.call(Kind::fsync, io_args(3, data), 0);
  r0.call(Kind::close, io_args(4, data), 0);
  r0.call(Kind::close, io_args(3, data), 0);
  r0.call(Kind::open, io_args(3, part, -1, -1, kCreate, 0644), 3);
  r0.call(Kind::write, io_args(3, part, 0, 10), 10);
  r0.call(Kind::close, io_args(3, part), 0);
  r0.call(Kind::rename, io_args(0, part, -1, -1, 0, 0, final_name), 0);
  r0.call(Kind::creat, io_args(3, gone, -1, -1, kCreate, 0600), 3);
  r0.call(Kind::close, io_args(3, gone), 0);
  r0.call(Kind::unlink, io_args(0, gone), 0);
  r0.call(Kind::mkdir, io_args(0, newdir, -1, -1, 0, 0755), 0);
  r0.call(Kind::stat, io_args(0, newdir), 0);
  r0.call(Kind::write, io_args(1, 1, -1, 13), 13);  // fd 1: stdout
  r0.call(Kind::printf, io_args(1, 1, -1, -1), 7);  // stream 1: stdout, through a FILE*
  pm.add(r0.stream(0));

  StreamMaker r1s;
  r1s.call(Kind::fopen, io_args(3, 3, -1, -1, kCreate), 1, 2000, 300);
  r1s.call(Kind::fwrite, io_args(3, 3, -1, 1000), 1000);
  r1s.call(Kind::fprintf, io_args(3, 3, -1, -1), 20);
  r1s.call(Kind::fclose, io_args(3, 3), 0);
  r1s.call(Kind::open, io_args(5, 4, -1, -1, O_RDONLY), 5);
  r1s.call(Kind::read, io_args(5, 4, 0, 8192), 8192);
  r1s.call(Kind::read, io_args(5, 4, 8192, 8192), 0);  // end of file, as traced
  r1s.call(Kind::close, io_args(5, 4), 0);
  r1s.call(Kind::open, io_args(6, 5, -1, -1, kCreate, 0644), 6);
  r1s.call(Kind::write, io_args(6, 5, 0, 5), 5);
  r1s.call(Kind::close, io_args(6, 5), 0);
  pm.add(r1s.stream(1));
  return pm;
}

}  // namespace

TEST_CASE("a replay recreates every written file at its size below --fs, and nothing outside", "[io]") {
  TempDir tmp;
  std::string root = tmp / "fs";
  fs::create_directories(tmp / "sibling");
  PlanMaker pm = posix_and_stdio_plan();
  ReplayOptions opt = options(root);
  opt.setup.resolver = GENERATE(Sandbox::Resolver::kernel, Sandbox::Resolver::userspace);
  Report rep = replay_plan(pm.plan, opt);

  REQUIRE(rep.errors == 0);
  REQUIRE(rep.first_errors.empty());
  REQUIRE(file_size(root + "/out/data.bin") == 16384 + 100 + 50);
  REQUIRE(file_size(root + "/out/final") == 10);
  REQUIRE(!fs::exists(root + "/out/tmp.part"));
  REQUIRE(!fs::exists(root + "/out/gone"));
  REQUIRE(fs::is_directory(root + "/out/newdir"));
  REQUIRE(file_size(root + "/home/u/results/r1.txt") == 1020);
  REQUIRE(file_size(root + "/etc/passwd") == 5);
  REQUIRE(file_size(root + "/in/mesh") == 8192);
  REQUIRE(file_size(root + "/__stdout__") == 13 + 7);
  REQUIRE(fs::is_empty(tmp / "sibling"));
  for (const auto& entry : fs::directory_iterator(tmp.path()))
    REQUIRE((entry.path().filename() == "fs" || entry.path().filename() == "sibling"));

  REQUIRE(rep.ops.at("pwrite64").count == 4);
  REQUIRE(rep.ops.at("pwrite64").bytes == 16384);
  REQUIRE(rep.ops.at("write").bytes == 100 + 50 + 10 + 13 + 5);
  REQUIRE(rep.ops.at("read").count == 2);
  REQUIRE(rep.ops.at("read").bytes == 8192);
  REQUIRE(rep.ops.at("fwrite").bytes == 1000);
  REQUIRE(rep.ops.at("fprintf").bytes == 20);
  REQUIRE(rep.skipped == 1);
  REQUIRE(rep.threads == 2);
  REQUIRE(rep.traced_ns > 0);
  REQUIRE(rep.traced_ns < 1'000'000);  // the last call's end, before the plan's (the tracer's finalize)

  SECTION("a second replay starts clean and ends the same") {
    Report again = replay_plan(pm.plan, opt);
    REQUIRE(again.errors == 0);
    REQUIRE(file_size(root + "/out/data.bin") == 16384 + 100 + 50);
    REQUIRE(file_size(root + "/__stdout__") == 13 + 7);
  }
}

TEST_CASE("--stdio null sends standard output nowhere", "[io]") {
  TempDir tmp;
  PlanMaker pm(1);
  StreamMaker sm;
  sm.call(Kind::write, io_args(1, 1, -1, 13), 13);
  sm.call(Kind::fputs, io_args(2, 2, -1, 5), 5);
  pm.add(sm.stream(0));
  ReplayOptions opt = options(tmp / "fs");
  opt.setup.stdio_null = true;
  Report rep = replay_plan(pm.plan, opt);
  REQUIRE(rep.errors == 0);
  REQUIRE(rep.ops.at("write").bytes == 13);
  REQUIRE(rep.ops.at("fputs").bytes == 5);
  REQUIRE(!fs::exists(tmp / "fs/__stdout__"));
}

TEST_CASE("replayed calls that fail where the traced ones worked are counted, with messages", "[io]") {
  TempDir tmp;
  PlanMaker pm(1);
  int64_t out = pm.file("/out/x", true);  // setup removes it: opening it without O_CREAT fails
  StreamMaker sm;
  sm.call(Kind::open, io_args(3, out, -1, -1, O_RDONLY), 3);
  sm.call(Kind::mkdir, io_args(0, out, -1, -1, 0, 0755), 0);
  sm.call(Kind::stat, io_args(0, out), -1);  // failed when traced too: not an error
  pm.add(sm.stream(0));
  Report rep = replay_plan(pm.plan, options(tmp / "fs"));
  REQUIRE(rep.errors == 1);
  REQUIRE_THAT(rep.first_errors.at(0),
               Catch::Contains("rank 0 thread 0") && Catch::Contains("/out/x") && Catch::Contains("No such file"));
  REQUIRE(fs::is_directory(tmp / "fs/out/x"));
}

TEST_CASE("an input file the traced program found executable is made executable, one it did not stays as it was",
          "[io]") {
  TempDir tmp;
  PlanMaker pm(1);
  int64_t tool = pm.file("/bin/tool", false, 100);
  int64_t data = pm.file("/in/data", false, 100);
  StreamMaker sm;
  sm.call(Kind::access, io_args(0, tool, -1, -1, 0, X_OK), 0);
  sm.call(Kind::faccessat, io_args(0, tool, -1, -1, 0, R_OK | X_OK), 0);
  sm.call(Kind::access, io_args(0, data, -1, -1, 0, X_OK), -1);  // not executable when traced either
  pm.add(sm.stream(0));
  Report rep = replay_plan(pm.plan, options(tmp / "fs"));
  REQUIRE(rep.errors == 0);
  auto exec_bits = [&](const char* rel) {
    struct stat st {};
    REQUIRE(::stat((tmp / rel).c_str(), &st) == 0);
    return st.st_mode & 0111;
  };
  REQUIRE(exec_bits("fs/bin/tool") == 0111);
  REQUIRE(exec_bits("fs/in/data") == 0);
}

TEST_CASE("O_DIRECT opens are reissued (without O_DIRECT where the target refuses it)", "[io]") {
  TempDir tmp;
  PlanMaker pm(1);
  int64_t f = pm.file("/direct.bin", true);
  StreamMaker sm;
  sm.call(Kind::open, io_args(3, f, -1, -1, kCreate | O_DIRECT, 0644), 3);
  sm.call(Kind::pwrite, io_args(3, f, 0, 4096), 4096);
  sm.call(Kind::close, io_args(3, f), 0);
  pm.add(sm.stream(0));
  Report rep = replay_plan(pm.plan, options(tmp / "fs"));
  REQUIRE(rep.errors == 0);
  REQUIRE(file_size(tmp / "fs/direct.bin") == 4096);
}

TEST_CASE("a full target file system stops the replay with a clear message", "[io]") {
  TempDir tmp;
  std::string root = tmp / "fs";
  fs::create_directories(root);
  // A /dev/full node inside the root answers every write with ENOSPC.
  if (::mknod((root + "/full").c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0) {
    WARN("cannot make a device node here (not root?): ENOSPC path not exercised");
    return;
  }
  PlanMaker pm(1);
  int64_t f = pm.file("/full", false);
  StreamMaker sm;
  sm.call(Kind::open, io_args(3, f, -1, -1, O_WRONLY), 3);
  sm.call(Kind::write, io_args(3, f, 0, 4096), 4096);
  sm.call(Kind::write, io_args(3, f, 4096, 4096), 4096);
  pm.add(sm.stream(0));
  REQUIRE_THROWS_WITH(replay_plan(pm.plan, options(root)),
                      Catch::Contains("target file system") && Catch::Contains("No space left"));
}

// Calls one op class spells several ways, told apart by their kinds' facts:
// each reissues its own system call (sync_file_range's bad flags fail as
// only it can), fdopen and fdopendir take what their descriptor names.
TEST_CASE("the variants of an op class replay by their kinds' facts", "[io]") {
  TempDir tmp;
  PlanMaker pm(1);
  int64_t data = pm.file("/out/data.bin", true);
  int64_t dir = pm.file("/out", false, 0, true);
  StreamMaker sm;
  sm.call(Kind::open, io_args(3, data, -1, -1, kCreate, 0644), 3);
  sm.call(Kind::pwrite, io_args(3, data, 0, 4096), 4096);
  sm.call(Kind::fdatasync, io_args(3, data), 0);
  sm.call(Kind::syncfs, io_args(3, data), 0);
  sm.call(Kind::sync_file_range, io_args(3, data, 0, 4096, 0x7f), 0);  // EINVAL, only to sync_file_range
  sm.call(Kind::fstat, io_args(3, data), 0);
  sm.call(Kind::truncate, io_args(-1, data, 2048), 0);  // by path
  sm.call(Kind::fdopen, io_args(7, data, -1, -1, O_WRONLY | O_APPEND, 0, 0, 3), 1);
  sm.call(Kind::fwrite, io_args(7, data, -1, 10), 10);
  sm.call(Kind::fclose, io_args(7, data), 0);
  sm.call(Kind::opendir, io_args(5, dir, -1, -1, O_RDONLY | O_DIRECTORY, 0, 0, -1), 5);
  sm.call(Kind::readdir, io_args(5, dir), 1);
  sm.call(Kind::closedir, io_args(5, dir), 0);
  sm.call(Kind::fdopendir, io_args(6, dir, -1, -1, O_RDONLY | O_DIRECTORY, 0, 0, 4), 6);
  sm.call(Kind::readdir, io_args(6, dir), 1);
  sm.call(Kind::closedir, io_args(6, dir), 0);
  pm.add(sm.stream(0));
  Report rep = replay_plan(pm.plan, options(tmp / "fs"));
  CAPTURE(rep.first_errors);
  REQUIRE(rep.errors == 1);
  REQUIRE_THAT(rep.first_errors.at(0), Catch::Contains("sync_file_range") && Catch::Contains("Invalid argument"));
  REQUIRE(file_size(tmp / "fs/out/data.bin") == 2048 + 10);
  REQUIRE(rep.skipped == 0);
  for (const char* k : {"fdatasync", "syncfs", "sync_file_range", "fstat", "truncate", "fdopen", "fdopendir"})
    REQUIRE(rep.ops.at(k).count == 1);
}
