#include "study/results.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace mpior::study {

namespace {

bool is_data_op(const std::string& op) {
  if (op.find("readdir") != std::string::npos || op.find("readlink") != std::string::npos) return false;
  return op.find("read") != std::string::npos || op.find("write") != std::string::npos ||
         op.find("sync") != std::string::npos;  // a flush is the cost of the data written
}

double mean_of(const nlohmann::json& rows, const char* key) {
  if (rows.empty()) return 0;
  double sum = 0;
  for (const nlohmann::json& r : rows) sum += r["predicted"].value(key, 0.0);
  return sum / double(rows.size());
}

// low <= value <= high, as [value / (1 + e), value * (1 + e)].
nlohmann::json around(double value, double rel) { return {value / (1 + rel), value * (1 + rel)}; }

bool overlap(const nlohmann::json& a, const nlohmann::json& b) {
  return a[0].get<double>() <= b[1].get<double>() && b[0].get<double>() <= a[1].get<double>();
}

}  // namespace

nlohmann::json replay_fields(const nlohmann::json& report) {
  const nlohmann::json& rows = report.at("per_rank");
  double io = mean_of(rows, "io_s");
  double data = 0, meta = 0;
  std::string top_op;
  double top_s = -1;
  const nlohmann::json ops = report.value("ops", nlohmann::json::object());
  for (const auto& [op, s] : ops.items()) {
    if (op.starts_with("MPI_") && !op.starts_with("MPI_File")) continue;
    if (op.starts_with("MPI_File")) continue;  // its POSIX calls are listed on their own
    double t = s.value("total_s", 0.0);
    (is_data_op(op) ? data : meta) += t;
    if (t > top_s) top_s = t, top_op = op;
  }
  double data_share = data + meta > 0 ? data / (data + meta) : 1;
  return {{"run_s", report.value("replay_s", 0.0)},
          {"traced_s", report.value("traced_s", 0.0)},
          {"error_pct", report.value("error_pct", 0.0)},
          {"io_s", io},
          {"split",
           {{"data_s", io * data_share},
            {"metadata_s", io * (1 - data_share)},
            {"sync_wait_s", mean_of(rows, "comm_s") + mean_of(rows, "wait_s")},
            {"compute_s", mean_of(rows, "compute_s")}}},
          {"dominant_op", top_op},
          {"failed_calls", report.value("errors", nlohmann::json::object()).value("count", 0)}};
}

nlohmann::json predict_fields(const nlohmann::json& report, int ranks) {
  double n = std::max(ranks, 1);
  nlohmann::json iv = report.at("interval");
  std::string dominant;
  const nlohmann::json classes = report.value("classes", nlohmann::json::array());
  const nlohmann::json dom = report.value("dominant", nlohmann::json::array());
  if (!dom.empty())
    for (const nlohmann::json& c : classes)
      if (c.value("id", 0) == dom[0].get<int>()) dominant = c.value("label", "");
  return {{"io_s", report.value("predicted_io_s", 0.0) / n},
          {"interval", {iv[0].get<double>() / n, iv[1].get<double>() / n}},
          {"traced_io_s", report.value("traced_io_s", 0.0) / n},
          {"dominant_class", dominant}};
}

namespace {

nlohmann::json trust_check(const nlohmann::json& trust, const Judgement& j) {
  nlohmann::json rows = nlohmann::json::array();
  bool passed = !trust.empty();
  double worst = 0;
  for (const nlohmann::json& t : trust) {
    bool ok = t.value("status", "") == "ok" && t.contains("replay");
    double err = ok ? t["replay"].value("error_pct", 0.0) : 0;
    if (ok) worst = std::max(worst, std::abs(err));
    ok = ok && std::abs(err) <= j.trust_error_pct;
    passed = passed && ok;
    rows.push_back({{"ranks", t["ranks"]},
                    {"status", t["status"]},
                    {"traced_s", t.contains("replay") ? t["replay"].value("traced_s", 0.0) : 0.0},
                    {"replay_s", t.contains("replay") ? t["replay"].value("run_s", 0.0) : 0.0},
                    {"error_pct", err},
                    {"ok", ok}});
  }
  return {{"passed", passed}, {"threshold_pct", j.trust_error_pct}, {"worst_error_pct", worst}, {"counts", rows}};
}

}  // namespace

nlohmann::json judge(nlohmann::json run, const Judgement& j) {
  nlohmann::json check = trust_check(run["trust"], j);
  double rel = std::max(j.min_error_pct, check["worst_error_pct"].get<double>()) / 100;
  bool trusted = check["passed"].get<bool>();
  nlohmann::json sentences = nlohmann::json::array();
  int largest = 0;
  for (nlohmann::json& p : run["points"]) {
    bool ok = p.value("status", "") == "ok";
    if (ok && p.contains("replay")) {
      p["replay"]["interval"] = around(p["replay"]["io_s"].get<double>(), rel);
      p["replay"]["run_interval"] = around(p["replay"]["run_s"].get<double>(), rel);
    }
    // Extrapolated points are drawn only once the traced ones replayed true.
    p["drawn"] = ok && (p["traced"].get<bool>() || trusted);
    if (ok && p.contains("predict") && p.contains("replay") &&
        !overlap(p["replay"]["interval"], p["predict"]["interval"]))
      sentences.push_back(fmt::format(
          "At {} ranks on {} ({}), the replay predicts {:.3g} s of I/O per rank [{:.3g}, {:.3g}] and the ratio "
          "prediction {:.3g} s [{:.3g}, {:.3g}]: they disagree beyond their intervals.",
          p["ranks"].get<int>(), p["target"].get<std::string>(), p["setting"].get<std::string>(),
          p["replay"]["io_s"].get<double>(), p["replay"]["interval"][0].get<double>(),
          p["replay"]["interval"][1].get<double>(), p["predict"]["io_s"].get<double>(),
          p["predict"]["interval"][0].get<double>(), p["predict"]["interval"][1].get<double>()));
    p["disagree"] = ok && p.contains("predict") && p.contains("replay") &&
                    !overlap(p["replay"]["interval"], p["predict"]["interval"]);
    if (ok) largest = std::max(largest, p["ranks"].get<int>());
  }
  nlohmann::json dominant = nlohmann::json::array();
  for (const nlohmann::json& p : run["points"])
    if (p["ranks"] == largest && p.value("status", "") == "ok" && p["setting"] == "base")
      dominant.push_back({{"target", p["target"]},
                          {"file", p.value("dominant_file", nlohmann::json())},
                          {"op", p["replay"].value("dominant_op", "")},
                          {"class", p.contains("predict") ? p["predict"].value("dominant_class", "") : ""}});
  run["trust_check"] = check;
  run["replay_error_pct"] = rel * 100;
  run["disagreements"] = sentences;
  run["largest"] = {{"ranks", largest}, {"dominant", dominant}};
  return run;
}

}  // namespace mpior::study
