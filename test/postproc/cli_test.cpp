// End to end: the built mpior-post binary (path in $MPIOR_POST) on trace
// directories written here.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "test/postproc/fixture.hpp"
#include "trace/format.hpp"

using namespace mpior;
using namespace mpior::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

struct Run {
  int status = -1;
  std::string output;  // stdout and stderr
};

Run run_post(const std::string& args) {
  const char* bin = std::getenv("MPIOR_POST");
  REQUIRE(bin != nullptr);
  std::string cmd = std::string(bin) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  Run r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::vector<trace::RankTrace> small_job() {
  std::vector<trace::RankTrace> out;
  for (int32_t r = 0; r < 2; ++r) {
    RankBuilder b(r, 2);
    int32_t f = b.file("/scratch/out_" + std::to_string(r));
    b.open(f, 3, 0101, 3);
    b.pwrite(f, 3, 0, 100, 100);
    if (r == 0) b.send(0, 1, 1);
    if (r == 1) b.recv(0, 0, 1, 0, 1);
    b.collective(trace::Kind::MPI_Barrier, 0);
    out.push_back(b.finish());
  }
  return out;
}

// N-to-N: rank r writes file_<r> at r*512 + i*N*512.
std::vector<trace::RankTrace> n_to_n(int32_t size) {
  std::vector<trace::RankTrace> out;
  for (int32_t r = 0; r < size; ++r) {
    RankBuilder b(r, size);
    int32_t f = b.file("/scratch/file_" + std::to_string(r));
    b.open(f, 3, 0101, 3);
    for (int64_t i = 0; i < 6; ++i) b.pwrite(f, 3, r * 512 + i * size * 512, 512, 512);
    b.collective(trace::Kind::MPI_Barrier, 0);
    out.push_back(b.finish());
  }
  return out;
}

}  // namespace

TEST_CASE("mpior-post merges equal ranks, says so, and --verify checks the plan", "[postproc][cli][merge]") {
  TempDir tmp;
  write_trace_dir(tmp / "t", complete_job(8), n_to_n(8));
  Run r = run_post((tmp / "t") + " --verify");
  INFO(r.output);
  REQUIRE(r.status == 0);
  REQUIRE_THAT(r.output, Contains("8 ranks, 1 streams") &&
                             Contains("verified " + (tmp / "t/plan/plan.mpior") +
                                      ": its 1 streams give back the 64 events of 8 ranks exactly"));
  REQUIRE_THAT(read_text(tmp / "t/plan/summary.txt"),
               Contains("plan: 1 streams for 8 rank threads of 8 ranks") && Contains("0-7"));
  auto j = nlohmann::json::parse(read_text(tmp / "t/plan/summary.json"));
  REQUIRE(j["plan"]["streams"] == 1);
  REQUIRE(j["plan"]["per_stream"][0]["rank_list"] == "0-7");
  REQUIRE(j["plan"]["per_stream"][0]["params_by_rank"] == 1);
  REQUIRE(j["ops"]["pwrite"] == 48);  // the summary still counts every rank's calls

  Run dump = run_post("--dump " + (tmp / "t/plan/plan.mpior"));
  REQUIRE(dump.status == 0);
  REQUIRE_THAT(dump.output, Contains("stream thread 0 ranks 0+1*i (x8)") &&
                                Contains("off=<ranks 0+1*i (x8): 0+4096*i (x6)+512*rank>"));
  REQUIRE(run_post("--dump x --verify").status == 2);
}

TEST_CASE("mpior-post DIR writes the plan and its summaries", "[postproc][cli]") {
  TempDir tmp;
  write_trace_dir(tmp / "t", complete_job(2), small_job());
  Run r = run_post(tmp / "t");
  INFO(r.output);
  REQUIRE(r.status == 0);
  REQUIRE_THAT(r.output, Contains("wrote " + (tmp / "t/plan")));
  trace::Plan plan = trace::read_plan(tmp / "t/plan/plan.mpior");
  REQUIRE(plan.ranks.size() == 2);
  REQUIRE(plan.files[4].path == "/scratch/out_1");
  auto j = nlohmann::json::parse(read_text(tmp / "t/plan/summary.json"));
  for (const char* key : {"ranks", "ops", "files", "mpi", "time"}) REQUIRE(j.contains(key));
  REQUIRE(j["ops"]["pwrite"] == 2);
  REQUIRE(j["mpi"]["logged"] == 4);
  REQUIRE_THAT(read_text(tmp / "t/plan/summary.txt"), Contains("/scratch/out_0"));

  Run other = run_post((tmp / "t") + " -o " + (tmp / "elsewhere/p"));
  REQUIRE(other.status == 0);
  REQUIRE(trace::read_plan(tmp / "elsewhere/p/plan.mpior") == plan);
}

TEST_CASE("mpior-post on a corrupt directory exits 1 naming the file", "[postproc][cli]") {
  TempDir tmp;
  write_trace_dir(tmp / "t", complete_job(2), small_job());
  std::string bad = tmp / "t/rank-000001.mpior";
  auto bytes = trace::read_file(bad);
  bytes.resize(bytes.size() / 2);
  trace::write_file_atomic(bad, bytes);
  Run r = run_post(tmp / "t");
  REQUIRE(r.status == 1);
  REQUIRE_THAT(r.output, StartsWith("mpior-post: " + bad));
  REQUIRE(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  REQUIRE_FALSE(std::filesystem::exists(tmp / "t/plan"));

  std::filesystem::remove(bad);
  Run missing = run_post(tmp / "t");
  REQUIRE(missing.status == 1);
  REQUIRE_THAT(missing.output, Contains("1 of 2 ranks have no trace (rank 1)") && Contains(bad));
  // The summary of the rank traced is written; the plan is refused.
  REQUIRE(std::filesystem::exists(tmp / "t/plan/summary.json"));
  REQUIRE_FALSE(std::filesystem::exists(tmp / "t/plan/plan.mpior"));
}

TEST_CASE("mpior-post --dump prints files and rejects others", "[postproc][cli]") {
  TempDir tmp;
  write_trace_dir(tmp / "t", complete_job(2), small_job());
  Run r = run_post("--dump " + (tmp / "t/rank-000000.mpior"));
  REQUIRE(r.status == 0);
  REQUIRE_THAT(r.output, Contains("mpior rank trace") && Contains("MPI_Send") && Contains("/scratch/out_0"));
  Run bad = run_post("--dump " + (tmp / "nothing"));
  REQUIRE(bad.status == 1);
  REQUIRE_THAT(bad.output, StartsWith("mpior-post: " + (tmp / "nothing")));
}

TEST_CASE("mpior-post usage errors exit 2", "[postproc][cli]") {
  REQUIRE(run_post("").status == 2);
  REQUIRE(run_post("--no-such-flag x").status == 2);
  REQUIRE(run_post("a b").status == 2);
  Run both = run_post("--dump x dir");
  REQUIRE(both.status == 2);
  REQUIRE_THAT(both.output, Contains("excludes"));
  REQUIRE(run_post("--help").status == 0);
}

TEST_CASE("mpior-post refuses bad striping hints", "[postproc][cli][lustre]") {
  std::string with = "--extrapolate 8 --cb-nodes 2 ";
  for (const char* bad : {"--striping-unit 0", "--striping-unit 1M", "--striping-unit 4096 --striping-factor 0",
                          "--striping-unit 4096 --striping-factor x",
                          "--striping-unit 4096 --striping-factor 2 --romio-lustre-co-ratio 0",
                          "--striping-unit 4096 --striping-factor 2 --romio-lustre-coll-threshold -1"}) {
    CAPTURE(bad);
    Run got = run_post(with + bad + " dir");
    CHECK(got.status == 2);
    CHECK_THAT(got.output, Contains(": Value") && Contains("not in range"));
  }
  Run alone = run_post(with + "--striping-factor 2 dir");
  CHECK(alone.status == 2);
  CHECK_THAT(alone.output, Contains("--striping-factor requires --striping-unit"));
  std::string lustre = with + "--striping-unit 4096 --striping-factor 2 ";
  Run mode = run_post(lustre + "--romio-lustre-ds-in-coll maybe dir");
  CHECK(mode.status == 2);
  CHECK_THAT(mode.output, Contains("maybe not in {enable,disable,automatic}"));
  Run unstriped = run_post(with + "--romio-lustre-co-ratio 2 dir");
  CHECK(unstriped.status == 2);
  CHECK_THAT(unstriped.output, Contains("--romio-lustre-co-ratio requires --striping-factor"));
}

TEST_CASE("an unwritable plan directory exits 1 naming it", "[postproc][cli]") {
  TempDir tmp;
  write_trace_dir(tmp / "t", complete_job(2), small_job());
  trace::write_file_atomic(tmp / "file", std::vector<uint8_t>{'x'});
  Run r = run_post((tmp / "t") + " -o " + (tmp / "file/plan"));
  REQUIRE(r.status == 1);
  REQUIRE_THAT(r.output, StartsWith("mpior-post: " + (tmp / "file/plan")));
}
