#include "postproc/plan_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <thread>

#include "postproc/scope.hpp"
#include "postproc/summary.hpp"
#include "postproc/summary_classes.hpp"
#include "postproc/summary_files.hpp"
#include "postproc/summary_writer.hpp"
#include "postproc/traced_hints.hpp"
#include "trace/cursor.hpp"

namespace mpior::postproc {

namespace {

bool any_pruned(const trace::KindTallies& t) {
  for (const trace::KindTally& k : t)
    if (k.calls) return true;
  return false;
}

// One class of a stream's ranks (summary_classes.hpp): its members and the
// one walked.
struct Work {
  uint32_t stream;
  std::vector<int64_t> ranks;
};

// The calls of ranks[0] of each class of `work` whose index is `part` modulo
// `parts`, counted for every rank of its class; with every_rank, each rank
// is a class of its own.
Summary walk(const trace::Plan& plan, const std::string& title, const std::vector<Work>& work, size_t part,
             size_t parts) {
  Summary out = SummaryCollector(plan.ranks.size(), plan.files.size()).take();
  static const CommResolution no_comms;  // the summary needs files only
  std::vector<uint32_t> threads;         // by stream, for messages
  for (const trace::Stream& s : plan.streams) threads.push_back(s.thread);
  std::vector<int32_t> local_files;  // the walked rank's file ids map to themselves
  for (size_t i = part; i < work.size(); i += parts) {
    const Work& w = work[i];
    auto r = int32_t(w.ranks[0]);
    local_files.resize(plan.ranks[size_t(r)].files.size());
    for (size_t f = 0; f < local_files.size(); ++f) local_files[f] = int32_t(f);
    RankScope scope(r, title, local_files, no_comms);
    scope.set_threads(threads);
    SummaryCollector collect(1, local_files.size(), r);
    trace::EventCursor cursor(plan.streams[w.stream], r);
    trace::Event ev;
    EventPos pos{w.stream, 0};
    while (cursor.next(ev)) {
      collect.observe(scope, ev, pos);
      ++pos.index;
    }
    out.add_class(collect.take(), w.ranks, plan.ranks);
  }
  return out;
}

std::vector<Work> work_of(const trace::Plan& plan, bool every_rank) {
  std::vector<Work> work;
  for (uint32_t si = 0; si < plan.streams.size(); ++si) {
    if (every_rank) {
      for (int64_t r : plan.streams[si].rank_list()) work.push_back({si, {r}});
      continue;
    }
    for (std::vector<int64_t>& ranks : summary_rank_classes(plan, plan.streams[si]))
      work.push_back({si, std::move(ranks)});
  }
  return work;
}

}  // namespace

// Every class's events once; many classes (a plan whose ranks all differ)
// on two threads.
Summary plan_totals(const trace::Plan& plan, const std::string& title, bool every_rank) {
  std::vector<Work> work = work_of(plan, every_rank);
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

namespace {

nlohmann::json extrap_json(const trace::ExtrapInfo& x) {
  nlohmann::json inputs = nlohmann::json::array();
  for (size_t i = 0; i < x.inputs.size(); ++i) inputs.push_back({{"dir", x.inputs[i]}, {"ranks", x.input_ranks[i]}});
  nlohmann::json models = nlohmann::json::object();
  nlohmann::json approximate = nlohmann::json::array();
  nlohmann::json hints = nlohmann::json::array();
  size_t modelled = 0;
  for (const trace::ExtrapNote& n : x.notes) {
    if (is_hint_note(n)) {
      hints.push_back({{"hint", n.what.substr(5)}, {"value", n.model}, {"source", n.name}});
      continue;
    }
    ++modelled;
    models[n.name] = models.value(n.name, 0) + 1;
    if (n.name == trace::kApproximateModel)
      approximate.push_back({{"stream", n.stream}, {"position", n.leaf}, {"what", n.what}, {"model", n.model}});
  }
  return {{"target", x.target}, {"inputs", inputs},           {"quantities_modelled", modelled},
          {"models", models},   {"approximate", approximate}, {"mpiio_hints", hints}};
}

std::string extrap_text(const trace::ExtrapInfo& x) {
  std::string out = fmt::format("\nextrapolated to {} ranks from:\n", x.target);
  for (size_t i = 0; i < x.inputs.size(); ++i) out += fmt::format("  {} ({} ranks)\n", x.inputs[i], x.input_ranks[i]);
  out += fmt::format(
      "  {} quantities follow a model other than a constant (mpior-post --dump shows each)\n",
      std::count_if(x.notes.begin(), x.notes.end(), [](const trace::ExtrapNote& n) { return !is_hint_note(n); }));
  for (const trace::ExtrapNote& n : x.notes)
    if (is_hint_note(n)) out += fmt::format("  MPI-IO hint {}={} ({})\n", n.what.substr(5), n.model, n.name);
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
  a.summary = plan_totals(plan, title);
  SummaryHeader h{title, plan.job, {}, {}};
  for (const trace::PlanRank& r : plan.ranks) h.hosts.push_back(r.host), h.placements.push_back(r.placement);
  std::string text = summary_text(h, a) + plan_streams_text(plan);
  nlohmann::json extra = {{"plan", plan_streams_json(plan)}};
  if (plan.extrap.target) {
    text += extrap_text(plan.extrap);
    extra["extrapolated"] = extrap_json(plan.extrap);
  }
  return {std::move(text), summary_json_text(h, a, extra)};
}

}  // namespace mpior::postproc
