#include "extrap/extrapolate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "extrap/blocksize.hpp"
#include "extrap/library_io.hpp"
#include "extrap/loop_lift.hpp"
#include "extrap/models.hpp"
#include "extrap/prune_align.hpp"
#include "extrap/rank_rules.hpp"
#include "extrap/streams.hpp"
#include "extrap/tables.hpp"
#include "trace/format.hpp"
#include "trace/tool_error.hpp"

namespace mpior::extrap {

namespace {

constexpr int32_t kNone = -1;

void check_inputs(const std::vector<Input>& inputs, int64_t target) {
  if (inputs.size() < 3)
    throw ToolError(fmt::format("extrapolation needs plans at three or more rank counts, got {}", inputs.size()));
  if (target < 1) throw ToolError(fmt::format("cannot extrapolate to {} ranks", target));
  if (target > int64_t(INT32_MAX)) throw ToolError(fmt::format("{} ranks is more than mpior can number", target));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Input& in = inputs[i];
    if (in.plan.extrap.target)
      throw ToolError(in.name + ": is itself an extrapolated plan; extrapolate from traced runs");
    if (i && in.n == inputs[i - 1].n)
      throw ToolError(fmt::format("{} and {} both ran {} ranks: the inputs need distinct rank counts",
                                  inputs[i - 1].name, in.name, in.n));
    if (in.plan.job.cmdline != inputs[0].plan.job.cmdline)
      throw ToolError(fmt::format("{} and {} are not the same program with the same arguments: '{}' against '{}'",
                                  inputs[0].name, in.name, inputs[0].plan.job.cmdline, in.plan.job.cmdline));
  }
}

// Per thread: the class of every target rank (kNone when it lacks the thread).
struct ThreadAssignment {
  uint32_t thread;
  std::vector<int32_t> cls;  // per target rank: index into Classes::all, or kNone
  std::vector<RankRule> rules;
  std::vector<int32_t> ids;  // per class of the rules: index into Classes::all, or kNone

  // Class c's ranks at n ranks.
  std::vector<int64_t> ranks_of(size_t c, int64_t n) const {
    std::vector<int64_t> out;
    std::vector<int32_t> at = assign_ranks(rules, n);
    for (size_t r = 0; r < at.size(); ++r)
      if (at[r] >= 0 && ids[size_t(at[r])] == int32_t(c)) out.push_back(int64_t(r));
    return out;
  }
};

std::vector<ThreadAssignment> assign(const std::vector<Input>& inputs, const Classes& classes, int64_t target,
                                     std::vector<trace::ExtrapNote>& notes,
                                     std::vector<std::pair<size_t, std::string>>& rank_rules_text) {
  std::vector<int64_t> ns;
  for (const Input& in : inputs) ns.push_back(in.n);
  std::vector<ThreadAssignment> out;
  for (const ThreadClasses& t : classes.threads) {
    std::vector<std::vector<std::vector<int64_t>>> sets;
    std::vector<std::string> names;
    std::vector<int32_t> ids;
    for (size_t c : t.classes) {
      sets.push_back(classes.all[c].ranks);
      names.push_back(classes.all[c].name());
      ids.push_back(int32_t(c));
    }
    bool some_lack = std::any_of(t.none.begin(), t.none.end(), [](const auto& v) { return !v.empty(); });
    if (some_lack) {
      sets.push_back(t.none);
      names.push_back(fmt::format("no thread {}", t.thread));
      ids.push_back(kNone);
    }
    std::vector<RankRule> rules = rank_rules(ns, sets, names);
    ThreadAssignment a{t.thread, {}, rules, ids};
    for (int32_t c : assign_ranks(rules, target)) a.cls.push_back(c < 0 ? kNone : ids[size_t(c)]);
    for (const RankRule& rule : rules)
      if (ids[rule.cls] != kNone) rank_rules_text.emplace_back(size_t(ids[rule.cls]), rule.pred.text());
    out.push_back(std::move(a));
  }
  (void)notes;
  return out;
}

// A rank's kind: its class on every thread.
RankKinds rank_kinds(const std::vector<Input>& inputs, const Classes& classes,
                     const std::vector<ThreadAssignment>& target) {
  RankKinds k;
  std::map<std::vector<int32_t>, int32_t> ids;
  auto kind_of = [&](const std::vector<int32_t>& tuple) {
    auto [it, fresh] = ids.emplace(tuple, int32_t(k.names.size()));
    if (fresh) {
      std::string name;
      for (size_t t = 0; t < tuple.size(); ++t)
        if (tuple[t] != kNone) name += (name.empty() ? "" : " + ") + classes.all[size_t(tuple[t])].name();
      k.names.push_back(name.empty() ? "no stream" : name);
    }
    return it->second;
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<std::vector<int32_t>> tuples(size_t(inputs[i].n), std::vector<int32_t>(classes.threads.size(), kNone));
    for (size_t t = 0; t < classes.threads.size(); ++t)
      for (size_t c : classes.threads[t].classes)
        for (int64_t r : classes.all[c].ranks[i]) tuples[size_t(r)][t] = int32_t(c);
    std::vector<int32_t> kinds;
    for (const auto& tuple : tuples) kinds.push_back(kind_of(tuple));
    k.inputs.push_back(std::move(kinds));
  }
  size_t n = target.empty() ? 0 : target.front().cls.size();
  for (size_t r = 0; r < n; ++r) {
    std::vector<int32_t> tuple;
    for (const ThreadAssignment& a : target) tuple.push_back(a.cls[r]);
    k.target.push_back(kind_of(tuple));
  }
  return k;
}

// Calls pruned online, per kind, are job totals: exact when a model of n
// fits them (r = n lets the rank models act on n: n mod 2 ranks whose group
// is alone), else the best timing-style fit.
trace::KindTallies extrapolate_pruned(const std::vector<Input>& inputs, int64_t target) {
  trace::KindTallies out{};
  for (size_t kind = 0; kind < out.size(); ++kind) {
    std::vector<Sample> exact;
    std::vector<std::pair<int64_t, double>> calls, time;
    bool any = false;
    for (const Input& in : inputs) {
      exact.push_back({in.n, in.n, int64_t(in.plan.pruned[kind].calls)});
      calls.emplace_back(in.n, double(in.plan.pruned[kind].calls));
      time.emplace_back(in.n, double(in.plan.pruned[kind].time_ns));
      any = any || in.plan.pruned[kind].calls;
    }
    if (!any) continue;
    std::optional<Fit> fit = fit_exact(exact);
    std::optional<int64_t> value = fit ? fit->eval_int(target, target) : std::nullopt;
    out[kind].calls =
        value && *value >= 0 ? uint64_t(*value) : uint64_t(std::llround(fit_timing(calls).predict(target)));
    out[kind].time_ns = out[kind].calls ? std::llround(fit_timing(time).predict(target)) : 0;
  }
  return out;
}

trace::JobInfo target_job(const std::vector<Input>& inputs, int64_t target) {
  trace::JobInfo j = inputs.back().plan.job;
  uint64_t h = 0x6A09E667F3BCC908ull ^ uint64_t(target);
  for (const Input& in : inputs) h = (h ^ in.plan.job.job_id) * 0x100000001B3ull;
  j.job_id = h;
  j.size = int32_t(target);
  j.state = trace::JobState::complete;
  j.ranks_written.clear();
  for (int64_t r = 0; r < target; ++r) j.ranks_written.push_back(int32_t(r));
  return j;
}

}  // namespace

trace::Plan extrapolate(std::vector<Input> inputs, int64_t target, const Options& opt,
                        std::vector<std::string>* warnings, CollectiveIo* collective_io) {
  std::sort(inputs.begin(), inputs.end(), [](const Input& a, const Input& b) { return a.n < b.n; });
  check_inputs(inputs, target);
  if (opt.cb_buffer_size < 1) throw ToolError("the collective buffer size must be at least one byte");
  std::vector<std::string> warned;
  for (std::string& w : align_pruning(inputs)) warned.push_back(std::move(w));
  for (std::string& w : align_library_io(inputs)) warned.push_back(std::move(w));
  CollectiveIo dealt_later;
  for (std::string& w : align_collective_io(inputs, dealt_later)) warned.push_back(std::move(w));
  if (collective_io) *collective_io = dealt_later;
  lift_lone_loops(inputs);
  Classes classes = find_classes(inputs);
  trace::Plan out;
  std::vector<trace::ExtrapNote> notes;
  FileUses uses(inputs);
  DealtTables dealt(inputs);
  int64_t terminal_approximated = 0, messages_approximated = 0;
  StreamContext ctx{inputs, uses, opt.strict, notes, warned, terminal_approximated, messages_approximated, dealt};
  std::vector<std::pair<size_t, std::string>> rules;  // class -> its rank rule
  std::vector<ThreadAssignment> threads = assign(inputs, classes, target, notes, rules);
  // The target's streams: one per class some target rank runs, by first rank.
  std::vector<std::pair<std::vector<int64_t>, size_t>> streams;
  std::vector<const ThreadAssignment*> thread_of(classes.all.size());
  for (size_t c = 0; c < classes.all.size(); ++c) {
    uint32_t thread = classes.all[c].shape->thread;
    const auto& a = *std::find_if(threads.begin(), threads.end(), [&](auto& t) { return t.thread == thread; });
    thread_of[c] = &a;
    std::vector<int64_t> ranks;
    for (size_t r = 0; r < a.cls.size(); ++r)
      if (a.cls[r] == int32_t(c)) ranks.push_back(int64_t(r));
    if (!ranks.empty()) streams.emplace_back(std::move(ranks), c);
  }
  std::sort(streams.begin(), streams.end(), [&](const auto& x, const auto& y) {
    if (x.first.front() != y.first.front()) return x.first.front() < y.first.front();
    return classes.all[x.second].shape->thread < classes.all[y.second].shape->thread;
  });
  for (const auto& [ranks, c] : streams) {
    int32_t index = int32_t(out.streams.size());
    for (const auto& [cls, text] : rules)
      if (cls == c) notes.push_back({index, -1, -1, "rank list", text, "rank rule"});
    RanksAt ranks_at = [a = thread_of[c], c](int64_t n) { return a->ranks_of(c, n); };
    out.streams.push_back(extrapolate_stream(classes.all[c], ctx, ranks, target, index, ranks_at));
    for (uint32_t leaf : collective_requests(out.streams.back())) {
      uint64_t most = split_requests(out.streams.back(), leaf, opt.cb_buffer_size);
      if (most > 1)
        notes.push_back({index, int32_t(leaf), -1, "count",
                         fmt::format("requests above the collective buffer ({} bytes) split, up to {} per call",
                                     opt.cb_buffer_size, most),
                         "max-blocksize rule"});
    }
  }
  extrapolate_tables(ctx, rank_kinds(inputs, classes, threads), out);
  if (terminal_approximated > 0)
    warned.push_back(
        fmt::format("{} position{} writing to <stdout> or <stderr> approximated (printed text, whose "
                    "bytes follow the values printed; the plan's notes give each)",
                    terminal_approximated, terminal_approximated == 1 ? "" : "s"));
  if (messages_approximated > 0)
    warned.push_back(fmt::format(
        "{} position{} sending or receiving messages whose sizes follow the data approximated (the replay moves the "
        "sender's bytes, so a size sets only the message's cost; the plan's notes give each)",
        messages_approximated, messages_approximated == 1 ? "" : "s"));
  out.job = target_job(inputs, target);
  out.pruned = extrapolate_pruned(inputs, target);
  out.extrap.target = int32_t(target);
  for (const Input& in : inputs) {
    out.extrap.inputs.push_back(in.name);
    out.extrap.input_ranks.push_back(int32_t(in.n));
  }
  out.extrap.notes = std::move(notes);
  if (warnings) *warnings = std::move(warned);
  return out;
}

}  // namespace mpior::extrap
