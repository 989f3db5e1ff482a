#include "study/results.hpp"

#include <catch2/catch.hpp>

using namespace mpior::study;
using nlohmann::json;

namespace {

json replay_report(double io, double traced, double replay) {
  json rank = {{"predicted", {{"io_s", io}, {"compute_s", 1.0}, {"comm_s", 0.25}, {"wait_s", 0.25}}}};
  return {{"replay_s", replay},
          {"traced_s", traced},
          {"error_pct", (replay - traced) / traced * 100},
          {"per_rank", {rank, rank}},
          {"ops", {{"pwrite", {{"total_s", 3.0}}}, {"open", {{"total_s", 1.0}}}, {"MPI_Barrier", {{"total_s", 9.0}}}}},
          {"errors", {{"count", 0}}}};
}

json point(const std::string& target, int ranks, bool traced, double replay_io, double predict_io) {
  return {{"id", target + std::to_string(ranks)},
          {"setting", "base"},
          {"target", target},
          {"ranks", ranks},
          {"traced", traced},
          {"status", "ok"},
          {"replay", replay_fields(replay_report(replay_io, 2, 2))},
          {"predict", {{"io_s", predict_io}, {"interval", {predict_io * 0.9, predict_io * 1.1}}}}};
}

}  // namespace

TEST_CASE("replay fields: means per rank, I/O split by op time, MPI left out") {
  json f = replay_fields(replay_report(2.0, 4.0, 5.0));
  CHECK(f["io_s"].get<double>() == Approx(2.0));
  CHECK(f["split"]["data_s"].get<double>() == Approx(1.5));
  CHECK(f["split"]["metadata_s"].get<double>() == Approx(0.5));
  CHECK(f["split"]["sync_wait_s"].get<double>() == Approx(0.5));
  CHECK(f["dominant_op"] == "pwrite");
  CHECK(f["error_pct"].get<double>() == Approx(25));
}

TEST_CASE("predict fields are per rank") {
  json r = {{"predicted_io_s", 8.0},
            {"interval", {4.0, 16.0}},
            {"traced_io_s", 6.0},
            {"dominant", {2}},
            {"classes", {{{"id", 1}, {"label", "open"}}, {{"id", 2}, {"label", "write 4KiB"}}}}};
  json f = predict_fields(r, 4);
  CHECK(f["io_s"].get<double>() == Approx(2.0));
  CHECK(f["interval"][1].get<double>() == Approx(4.0));
  CHECK(f["dominant_class"] == "write 4KiB");
}

TEST_CASE("judge: trust check gates drawing, intervals widen to the worst error, disagreement in words") {
  json trust = {{{"ranks", 2}, {"status", "ok"}, {"replay", replay_fields(replay_report(1, 2, 2.2))}}};
  json run = {{"trust", trust}, {"points", {point("A", 2, true, 1.0, 1.0), point("A", 8, false, 1.0, 3.0)}}};
  json j = judge(run, {5, 25});
  CHECK(j["trust_check"]["passed"] == true);
  CHECK(j["replay_error_pct"].get<double>() == Approx(10));
  const json& p8 = j["points"][1];
  CHECK(p8["drawn"] == true);
  CHECK(p8["replay"]["interval"][1].get<double>() == Approx(1.1));
  CHECK(p8["disagree"] == true);
  REQUIRE(j["disagreements"].size() == 1);
  CHECK(j["disagreements"][0].get<std::string>().find("At 8 ranks on A") == 0);
  CHECK(j["points"][0]["disagree"] == false);
  CHECK(j["largest"]["ranks"] == 8);

  run["trust"][0]["replay"] = replay_fields(replay_report(1, 2, 3));  // 50% off
  run["points"][1]["status"] = "failed";
  json bad = judge(run, {5, 25});
  CHECK(bad["trust_check"]["passed"] == false);
  CHECK(bad["trust_check"]["worst_error_pct"].get<double>() == Approx(50));
  CHECK(bad["points"][0]["drawn"] == true);   // traced points always drawn
  CHECK(bad["points"][1]["drawn"] == false);  // failed: marked, kept
  CHECK(bad["points"].size() == 2);
}
