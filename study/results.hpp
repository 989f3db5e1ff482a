// From the points' raw results to what study.json and the page show: the
// fields kept of each tool's report, the trust check, each point's interval,
// where the two predictions disagree, what dominates at the largest count.
// Pure: the unit tests feed it JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace mpior::study {

// Fields of one replay JSON (mpior-replay --json) the study keeps: run and
// I/O time per rank and the split into data, metadata, sync wait, compute.
nlohmann::json replay_fields(const nlohmann::json& report);
// Fields of one mpior-predict --json report, per rank.
nlohmann::json predict_fields(const nlohmann::json& report, int ranks);

struct Judgement {
  double min_error_pct = 5;     // the replay's interval is at least this wide
  double trust_error_pct = 25;  // traced counts must replay within this on the reference
};

// run: {"trust": [...], "points": [...]} as Runner::run returns them. Adds
// "trust_check", each point's replay interval and "drawn", "disagreements"
// (sentences) and "largest" (what dominates at the largest count).
nlohmann::json judge(nlohmann::json run, const Judgement& j);

}  // namespace mpior::study
