#include "replayer/setup.hpp"

#include <catch2/catch.hpp>
#include <fstream>

#include "test/replayer/plan_maker.hpp"
#include "trace/tool_error.hpp"

using namespace mpior::replay;
using namespace mpior::replay::testing;
using mpior::trace::Kind;

namespace {

std::string setup_error(const mpior::trace::Plan& plan, const std::string& fs_dir) {
  try {
    prepare_target(plan, {fs_dir});
  } catch (const mpior::ToolError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("setup creates inputs at their size, removes stale outputs, makes parents", "[setup]") {
  TempDir tmp;
  std::string root = tmp / "fs";
  PlanMaker pm(2);
  pm.file("/in/mesh.dat", false, 1'000'000);     // read, not created
  pm.file("/in/params.txt", false, 0);           // opened, nothing read
  pm.file("/out/result.dat", true, 0);           // created by the app
  pm.file("/out/app_made", true, 0, true);       // mkdir'ed by the app
  pm.file("/out/app_made/inside.dat", true, 0);  // created inside it
  pm.file("/scratch/used_dir", false, 0, true);  // a directory the app used
  pm.file("/rw/both.dat", true, 4096);           // created and read: recreated at its size
  pm.file("<stdin>", false, 10);
  fs::create_directories(root + "/out/app_made");
  std::ofstream(root + "/out/result.dat") << "stale output from an earlier replay";
  std::ofstream(root + "/rw/both.dat") << "stale";

  auto target = prepare_target(pm.plan, {root});

  REQUIRE(file_size(root + "/in/mesh.dat") == 1'000'000);
  REQUIRE(file_size(root + "/in/params.txt") == 0);
  REQUIRE(!fs::exists(root + "/out/result.dat"));
  REQUIRE(fs::is_directory(root + "/out"));
  REQUIRE(!fs::exists(root + "/out/app_made"));  // the replayed mkdir makes it
  REQUIRE(fs::is_directory(root + "/scratch/used_dir"));
  REQUIRE(file_size(root + "/rw/both.dat") == 4096);
  REQUIRE(file_size(root + "/__stdin__") == 10);
  REQUIRE(fs::exists(root + "/__stdout__"));
  REQUIRE(target->mapped[3] == "in/mesh.dat");
  REQUIRE(target->warnings.empty());
  SECTION("inputs hold real bytes, not a hole") {
    std::ifstream in(root + "/in/mesh.dat", std::ios::binary);
    std::string head(4096, '\0');
    in.read(head.data(), 4096);
    REQUIRE(head.find_first_not_of('\0') != std::string::npos);
  }
  SECTION("a larger existing input is kept; a smaller one is extended") {
    auto again = prepare_target(pm.plan, {root});
    REQUIRE(file_size(root + "/in/mesh.dat") == 1'000'000);
    fs::resize_file(root + "/in/mesh.dat", 10);
    again = prepare_target(pm.plan, {root});
    REQUIRE(file_size(root + "/in/mesh.dat") == 1'000'000);
  }
}

// Rank 0 mkdir'ed /run, rank 1 then opened /run/log with O_CREAT and found it
// (rank 0 had made it): found, not created, yet below a directory the run
// makes, so the replayed run makes it too and setup leaves both absent.
TEST_CASE("a file found below a directory the run makes is left to the run", "[setup]") {
  TempDir tmp;
  std::string root = tmp / "fs";
  PlanMaker pm(2);
  pm.file("/run", true, 0, true);
  pm.file("/run/log", false, 0);
  pm.file("/run/sub/data", false, 100);
  auto target = prepare_target(pm.plan, {root});
  REQUIRE(!fs::exists(root + "/run"));
  REQUIRE(target->warnings.empty());
}

// `rm -f out.gz; gzip out` and `rm -rf results; mkdir results` over what an
// earlier run left: found first, then made again. Setup makes them (empty) so
// the replayed removals find them, and clears what a previous replay left.
TEST_CASE("a file or directory the run removed and made again is there before the replay", "[setup]") {
  TempDir tmp;
  std::string root = tmp / "fs";
  PlanMaker pm(1);
  pm.file("/w/out.gz", true, 0);
  pm.plan.files.back().existed = true;
  pm.file("/w/results", true, 0, true);
  pm.plan.files.back().existed = true;
  pm.file("/w/results/old.txt", false, 0);  // found inside it (removed by rm -rf)
  pm.file("/w/results/new.txt", true, 0);   // made inside it by the run
  fs::create_directories(root + "/w/results");
  std::ofstream(root + "/w/out.gz") << "stale output from an earlier replay";
  std::ofstream(root + "/w/results/new.txt") << "stale";
  auto target = prepare_target(pm.plan, {root});
  REQUIRE(file_size(root + "/w/out.gz") == 0);
  REQUIRE(fs::is_directory(root + "/w/results"));
  REQUIRE(fs::exists(root + "/w/results/old.txt"));
  REQUIRE(!fs::exists(root + "/w/results/new.txt"));
  REQUIRE(target->warnings.empty());
}

TEST_CASE("a plan path that would leave --fs stops setup before anything changes", "[setup]") {
  TempDir tmp;
  std::string root = tmp / "fs";
  fs::create_directories(root);
  fs::create_directories(tmp / "outside");
  fs::create_symlink(tmp / "outside", root + "/data");
  PlanMaker pm(1);
  pm.file("/in/a.dat", false, 100);
  pm.file("/data/out/result.dat", true);
  std::string msg = setup_error(pm.plan, root);
  REQUIRE_THAT(msg, Catch::Contains("/data/out/result.dat") && Catch::Contains("would leave --fs"));
  REQUIRE(!fs::exists(root + "/in"));  // checked before the first change
  REQUIRE(fs::is_empty(tmp / "outside"));
}

TEST_CASE("an unwritable or non-directory --fs is a clear error", "[setup]") {
  TempDir tmp;
  std::ofstream(tmp / "file") << "x";
  PlanMaker pm(1);
  REQUIRE_THAT(setup_error(pm.plan, tmp / "file"), Catch::Contains(tmp / "file"));
}

TEST_CASE("the I/O buffer is sized to the plan's largest count, loops included", "[setup]") {
  PlanMaker pm(2);
  StreamMaker sm(false);
  // Counts 4096, 8192, ... 40960 in a strided run: the builder folds them.
  for (int i = 1; i <= 10; ++i) sm.call(Kind::pwrite, io_args(3, 3, 0, 4096 * i), 4096 * i);
  sm.call(Kind::read, io_args(3, 3, 0, 100), 50);
  sm.call(Kind::MPI_Send, mpi_args(0, 1, 0, 1 << 30));  // MPI bytes move no file data
  pm.add(sm.stream(0));
  REQUIRE(largest_io_count(pm.plan) == 40960);
  IoBuffer buf(size_t(largest_io_count(pm.plan)));
  REQUIRE(buf.size() >= 40960);

  mpior::trace::Stream& s = pm.plan.streams[0];
  mpior::trace::Leaf& leaf = s.leaves[0];
  SECTION("a strided loop: the last iteration is the largest") {
    std::vector<mpior::trace::SeqItem> strided = {{65536, 100, 1}, {1000, 0, 0}};  // 1000 + 65536*i, i < 100
    leaf.args[mpior::trace::arg::count].seq = s.values.add(strided);
    REQUIRE(largest_io_count(pm.plan) == 1000 + 65536 * 99);
  }
  SECTION("nested loops with a negative stride: the first outer iteration") {
    std::vector<mpior::trace::SeqItem> nested = {{-1000, 5, 2}, {10, 3, 1}, {50000, 0, 0}};
    leaf.args[mpior::trace::arg::count].seq = s.values.add(nested);
    REQUIRE(largest_io_count(pm.plan) == 50000 + 20);
  }
  SECTION("a per-rank variant: seq + scale * rank over the variant's ranks") {
    std::vector<mpior::trace::SeqItem> ranks = {{1, 2, 1}, {0, 0, 0}};  // ranks 0, 1
    mpior::trace::RankVariant v{s.values.add(ranks), s.values.add_scalar(100), 1 << 20};
    s.ranked.push_back({v});
    leaf.ret.ranked = int32_t(s.ranked.size() - 1);
    REQUIRE(largest_io_count(pm.plan) == 100 + (1 << 20));
  }
}

TEST_CASE("each rank copies through a buffer of its own, while they fit; past that, one shared", "[setup]") {
  TempDir tmp;
  PlanMaker pm(2);
  pm.file("/out/ckpt.dat", true, 0);
  StreamMaker sm(false);
  sm.call(Kind::pwrite, io_args(3, 3, 0, 4 << 20), 4 << 20);
  pm.add(sm.stream(0));
  auto target = prepare_target(pm.plan, {tmp / "fs"});
  const IoBuffer &zero = target->buffer_of(0), &one = target->buffer_of(1);
  REQUIRE(&zero != &one);  // the application's ranks wrote from memory of their own
  REQUIRE(zero.data() != one.data());
  REQUIRE(zero.size() >= size_t(4) << 20);
  REQUIRE(one.size() == zero.size());
  REQUIRE(one.data()[4096] != '\0');  // touched: resident as the program's arrays were
  SECTION("ranks x count past kOwnBuffersBytes: every rank shares setup's buffer") {
    PlanMaker many(int32_t(kOwnBuffersBytes / (size_t(4) << 20)) + 1);
    many.file("/out/ckpt.dat", true, 0);
    many.add(sm.stream(0));
    auto shared = prepare_target(many.plan, {tmp / "fs2"});
    REQUIRE(&shared->buffer_of(0) == shared->buffer.get());
    REQUIRE(&shared->buffer_of(1) == shared->buffer.get());
  }
}
