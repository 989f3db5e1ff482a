#include "postproc/plan_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <thread>

#include "postproc/scope.hpp"
#include "postproc/summary.hpp"
#include "postproc/summary_files.hpp"
#include "trace/cursor.hpp"

namespace mpior::postproc {

namespace {

bool any_pruned(const trace::KindTallies& t) {
  for (const trace::KindTally& k : t)
    if (k.calls) return true;
  return false;
}

// Walks every (stream, rank) of `work` whose index is `part` modulo `parts`.
Summary walk(const trace::Plan& plan, const std::string& title, const std::vector<std::pair<uint32_t, int64_t>>& work,
             size_t part, size_t parts) {
  SummaryCollector collect(plan.ranks.size(), plan.files.size());
  static const CommResolution no_comms;  // the summary needs files only
  std::vector<uint32_t> threads;         // by stream, for messages
  for (const trace::Stream& s : plan.streams) threads.push_back(s.thread);
  for (size_t i = part; i < work.size(); i += parts) {
    auto [si, r] = work[i];
    RankScope scope(int32_t(r), title, plan.ranks[size_t(r)].files, no_comms);
    scope.set_threads(threads);
    trace::EventCursor cursor(plan.streams[si], int32_t(r));
    trace::Event ev;
    EventPos pos{si, 0};
    while (cursor.next(ev)) {
      collect.observe(scope, ev, pos);
      ++pos.index;
    }
  }
  return collect.take();
}

// Every rank's events once; large plans (an extrapolation to 8,192 ranks)
// on two threads.
Summary totals(const trace::Plan& plan, const std::string& title) {
  std::vector<std::pair<uint32_t, int64_t>> work;
  for (uint32_t si = 0; si < plan.streams.size(); ++si)
    for (int64_t r : plan.streams[si].rank_list()) work.emplace_back(si, r);
  size_t parts = work.size() >= 1024 ? 2 : 1;
  std::vector<Summary> found(parts);
  std::exception_ptr failed;
  std::thread helper;
  if (parts == 2)
    helper = std::thread([&] {
      try {
        found[1] = walk(plan, title, work, 1, 2);
      } catch (...) {
        failed = std::current_exception();
      }
    });
  try {
    found[0] = walk(plan, title, work, 0, parts);
  } catch (...) {
    if (helper.joinable()) helper.join();
    throw;
  }
  if (helper.joinable()) helper.join();
  if (failed) std::rethrow_exception(failed);
  if (parts == 2) found[0].add(found[1]);
  SummaryCollector base(plan.ranks.size(), plan.files.size());
  for (size_t r = 0; r < plan.ranks.size(); ++r)
    base.begin_rank(int32_t(r), plan.ranks[r].traced_ns, plan.ranks[r].cpu_wait_ns);
  base.add_pruned(-1, any_pruned(plan.pruned), plan.pruned);
  Summary out = base.take();
  out.add(found[0]);
  return out;
}

nlohmann::json extrap_json(const trace::ExtrapInfo& x) {
  nlohmann::json inputs = nlohmann::json::array();
  for (size_t i = 0; i < x.inputs.size(); ++i) inputs.push_back({{"dir", x.inputs[i]}, {"ranks", x.input_ranks[i]}});
  nlohmann::json models = nlohmann::json::object();
  nlohmann::json approximate = nlohmann::json::array();
  for (const trace::ExtrapNote& n : x.notes) {
    models[n.name] = models.value(n.name, 0) + 1;
    if (n.name == trace::kApproximateModel)
      approximate.push_back({{"stream", n.stream}, {"position", n.leaf}, {"what", n.what}, {"model", n.model}});
  }
  return {{"target", x.target},
          {"inputs", inputs},
          {"quantities_modelled", x.notes.size()},
          {"models", models},
          {"approximate", approximate}};
}

std::string extrap_text(const trace::ExtrapInfo& x) {
  std::string out = fmt::format("\nextrapolated to {} ranks from:\n", x.target);
  for (size_t i = 0; i < x.inputs.size(); ++i) out += fmt::format("  {} ({} ranks)\n", x.inputs[i], x.input_ranks[i]);
  out += fmt::format("  {} quantities follow a model other than a constant (mpior-post --dump shows each)\n",
                     x.notes.size());
  size_t approximate = size_t(std::count_if(
      x.notes.begin(), x.notes.end(), [](const trace::ExtrapNote& n) { return n.name == trace::kApproximateModel; }));
  if (approximate)
    out += fmt::format("  {} incidental quantities are approximate: the best fit, not an exact one\n", approximate);
  return out;
}

}  // namespace

PlanSummary summarize_plan(const trace::Plan& plan, const std::string& title) {
  Analysis a;
  a.files.files = plan.files;
  a.comms.comms.resize(plan.comms.size());
  a.summary = totals(plan, title);
  SummaryHeader h{title, plan.job, {}, {}};
  for (const trace::PlanRank& r : plan.ranks) h.hosts.push_back(r.host), h.placements.push_back(r.placement);
  PlanSummary out{summary_text(h, a), summary_json(h, a)};
  out.text += plan_streams_text(plan);
  out.json["plan"] = plan_streams_json(plan);
  if (plan.extrap.target) {
    out.text += extrap_text(plan.extrap);
    out.json["extrapolated"] = extrap_json(plan.extrap);
  }
  return out;
}

}  // namespace mpior::postproc
