#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "replayer/replay_report.hpp"
#include "test/replayer/plan_maker.hpp"
#include "trace/tool_error.hpp"

using namespace mpior::replay;
using mpior::replay::testing::TempDir;
using mpior::trace::Kind;

namespace {

Report sample_report(size_t threads) {
  Report r;
  r.plan = "plan/plan.mpior";
  r.fs = "/mnt/target";
  r.ranks = int32_t(threads);
  r.threads = threads;
  r.traced_ns = 2'000'000'000;
  r.replay_ns = 2'100'000'000;
  for (size_t i = 0; i < threads; ++i)
    r.per_thread.push_back({int32_t(i), 0, 2'000'000'000 + int64_t(i) * 1000, 1'900'000'000, 12});
  OpTable t;
  t.add(Kind::pwrite, 1000, 4096);
  t.add(Kind::pwrite, 3000, 4096);
  t.add(Kind::MPI_Barrier, 500, 0);
  for (const auto& [kind, stats] : t.entries()) r.ops[std::string(mpior::trace::name(kind))].merge(stats);
  r.errors = 12;
  r.first_errors = {"rank 0 thread 0: open on /x: No such file or directory"};
  return r;
}

}  // namespace

TEST_CASE("operation statistics add up per kind", "[report]") {
  OpTable t;
  t.add(Kind::read, 100, 10);
  t.add(Kind::write, 50, 5);
  t.add(Kind::read, 300, -1);  // a failed call moves no bytes
  REQUIRE(t.entries().size() == 2);
  const OpStats& reads = t.entries()[0].second;
  REQUIRE(reads.count == 2);
  REQUIRE(reads.bytes == 10);
  REQUIRE(reads.total_ns == 400);
  REQUIRE(reads.max_ns == 300);
  REQUIRE(reads.mean_us() == Approx(0.2));
}

TEST_CASE("the error log keeps a count and the first messages", "[report]") {
  ErrorLog log;
  for (int i = 0; i < 25; ++i) log.add("e" + std::to_string(i));
  REQUIRE(log.count() == 25);
  REQUIRE(log.first().size() == ErrorLog::kKept);
  REQUIRE(log.first().front() == "e0");
}

TEST_CASE("the JSON report has every documented key", "[report]") {
  Report r = sample_report(3);
  nlohmann::json j = to_json(r);
  for (const char* key : {"ranks", "threads", "traced_s", "replay_s", "error_pct", "per_rank", "ops", "errors"})
    REQUIRE(j.contains(key));
  REQUIRE(j["error_pct"].get<double>() == Approx(5.0));
  REQUIRE(j["traced_s"].get<double>() == Approx(2.0));
  REQUIRE(j["per_rank"].size() == 3);
  REQUIRE(j["per_rank"][2]["rank"] == 2);
  REQUIRE(j["per_rank"][2]["traced_s"].get<double>() == Approx(1.9));
  REQUIRE(j["ops"]["pwrite"]["count"] == 2);
  REQUIRE(j["ops"]["pwrite"]["bytes"] == 8192);
  REQUIRE(j["ops"]["pwrite"]["mean_us"].get<double>() == Approx(2.0));
  REQUIRE(j["ops"]["pwrite"]["max_us"].get<double>() == Approx(3.0));
  REQUIRE(j["errors"]["count"] == 12);
  REQUIRE(j["errors"]["first"].size() == 1);
}

TEST_CASE("the text report shows times, error, threads and operations", "[report]") {
  std::ostringstream small, large;
  print_text(small, sample_report(3));
  REQUIRE_THAT(small.str(), Catch::Contains("traced time") && Catch::Contains("+5.00 %") && Catch::Contains("pwrite") &&
                                Catch::Contains("MPI_Barrier") && Catch::Contains("failed calls: 12") &&
                                Catch::Contains("... 11 more"));
  print_text(large, sample_report(1000));  // too many rows for a terminal: a summary instead
  REQUIRE_THAT(large.str(), Catch::Contains("per-thread replay time: min") && Catch::Contains("(rank 999)"));
}

TEST_CASE("collective waits that slept and woke late are reported per rank and summed", "[report]") {
  Report r = sample_report(2);
  std::ostringstream none, some;
  print_text(none, r);
  REQUIRE_THAT(none.str(), !Catch::Contains("wake-ups"));  // nobody slept: no line
  r.per_thread[0].slept_waits = 3, r.per_thread[0].late_ns = 40'000;
  r.per_thread[1].slept_waits = 1, r.per_thread[1].late_ns = 2'000;
  nlohmann::json j = to_json(r);
  REQUIRE(j["per_rank"][0]["predicted"]["slept_waits"] == 3);
  REQUIRE(j["per_rank"][1]["predicted"]["late_s"].get<double>() == Approx(2e-6));
  print_text(some, r);
  r.per_thread[1].charged_ns = 7'000;  // of comm_ns: the calibrated costs slept
  REQUIRE(to_json(r)["per_rank"][1]["predicted"]["charged_s"].get<double>() == Approx(7e-6));
  REQUIRE_THAT(some.str(), Catch::Contains("wake-ups     4 waits (collectives, receives) slept") &&
                               Catch::Contains("0.000042 s late"));
}

TEST_CASE("the replay's and the traced run's waits for a CPU are reported side by side", "[report]") {
  Report r = sample_report(2);
  r.cpu_wait_ns = 30'000'000;  // the plan's ranks', summed
  r.per_thread[0].cpu_wait_ns = 1'000'000, r.per_thread[1].cpu_wait_ns = 2'500'000;
  nlohmann::json j = to_json(r);
  REQUIRE(j["traced_cpu_wait_s"].get<double>() == Approx(0.03));
  REQUIRE(j["per_rank"][1]["predicted"]["cpu_wait_s"].get<double>() == Approx(0.0025));
  std::ostringstream text;
  print_text(text, r);
  REQUIRE_THAT(text.str(), Catch::Contains("cpu wait     (all threads) replay 0.003500 s, traced 0.030000 s"));
}

TEST_CASE("an unwritable --json path is an error naming it", "[report]") {
  TempDir tmp;
  std::string path = tmp / "no/such/dir/r.json";
  REQUIRE_THROWS_WITH(write_json(path, sample_report(1)), Catch::Contains(path));
  write_json(tmp / "r.json", sample_report(1));
  std::ifstream in(tmp / "r.json");
  REQUIRE(nlohmann::json::parse(in)["threads"] == 1);
}

TEST_CASE("the time after start-up is the slowest thread's, replayed and traced", "[report]") {
  Report r = sample_report(2);
  std::ostringstream none, some;
  print_text(none, r);
  REQUIRE_THAT(none.str(), !Catch::Contains("after start-up"));  // no MPI_Init replayed: no line
  r.per_thread[0].replay_ns = 10'000, r.per_thread[0].startup_ns = 4'000, r.per_thread[0].traced_ns = 9'000;
  r.per_thread[1].replay_ns = 9'000, r.per_thread[1].startup_ns = 1'000, r.per_thread[1].traced_ns = 8'000;
  r.per_thread[0].traced_startup_ns = 5'000, r.per_thread[1].traced_startup_ns = 2'000;
  REQUIRE(r.after_startup_ns() == 8'000);         // rank 1's, though rank 0 ended later
  REQUIRE(r.traced_after_startup_ns() == 6'000);  // rank 1's
  nlohmann::json j = to_json(r);
  REQUIRE(j["after_startup_s"].get<double>() == Approx(8e-6));
  REQUIRE(j["traced_after_startup_s"].get<double>() == Approx(6e-6));
  REQUIRE(j["per_rank"][0]["startup_s"].get<double>() == Approx(4e-6));
  REQUIRE(j["per_rank"][1]["traced_startup_s"].get<double>() == Approx(2e-6));
  print_text(some, r);
  REQUIRE_THAT(some.str(), Catch::Contains("after start-up   0.000008 s predicted, 0.000006 s traced (+33.33 %)"));
}
