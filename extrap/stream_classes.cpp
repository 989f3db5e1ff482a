#include "extrap/stream_classes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "merge/merge.hpp"
#include "trace/tool_error.hpp"

namespace mpior::extrap {

namespace {

std::string leaf_text(const trace::Leaf& l) {
  return fmt::format("{} (call site {:#x}, depth {})", trace::name(l.kind), l.callsite, l.depth);
}

// Leaves in common at the front of two streams.
size_t common_prefix(const trace::Stream& a, const trace::Stream& b) {
  size_t i = 0;
  while (i < a.leaves.size() && i < b.leaves.size() && a.leaves[i].kind == b.leaves[i].kind &&
         a.leaves[i].callsite == b.leaves[i].callsite && a.leaves[i].depth == b.leaves[i].depth)
    ++i;
  return i;
}

// Why a stream only input i shows may be no difference of the program's:
// it keeps an MPI call from a call site no other input's streams have, of
// a kind every other input pruned calls of. Online pruning then decided
// differently at this rank count: the gap rule (MPIOR_PRUNE_GAP_US) keeps
// a site that followed long computations, which ranks sharing CPUs do not
// show. Collectives are pruned alike before (prune_align.hpp); this names
// the others (a point-to-point call site). Empty when that is not the case.
std::string pruning_difference(const std::vector<Input>& inputs, size_t i, const trace::Stream& lone) {
  for (const trace::Leaf& l : lone.leaves) {
    if (!trace::is_mpi(l.kind)) continue;
    bool pruned_elsewhere = true, kept_elsewhere = false;
    for (size_t j = 0; j < inputs.size(); ++j) {
      if (j == i) continue;
      pruned_elsewhere = pruned_elsewhere && inputs[j].plan.pruned[size_t(l.kind)].calls > 0;
      for (const trace::Stream& s : inputs[j].plan.streams)
        kept_elsewhere = kept_elsewhere || std::any_of(s.leaves.begin(), s.leaves.end(), [&](const trace::Leaf& o) {
                           return s.thread == lone.thread && o.kind == l.kind && o.callsite == l.callsite;
                         });
    }
    if (pruned_elsewhere && !kept_elsewhere)
      return fmt::format(
          "; it keeps {} at call site {:#x}, which every other input pruned (online pruning decided "
          "differently at {} ranks: a synchronisation kept after long computations, MPIOR_PRUNE_GAP_US, which "
          "ranks sharing CPUs do not show). Trace every input with MPIOR_PRUNE_GAP_US=0 (or MPIOR_PRUNE=0), or "
          "use a run at another rank count instead of the {}-rank one",
          trace::name(l.kind), l.callsite, inputs[i].n, inputs[i].n);
  }
  return "";
}

// A stream only the largest input shows (ranks that write none of a table
// dealt over fewer ranks, HDF5's metadata entries at 8 ranks and more): one
// more input at a count where it shows would let it be extrapolated.
std::string largest_only(const std::vector<Input>& inputs, size_t i, const std::vector<int64_t>& ranks) {
  if (i + 1 != inputs.size() || ranks.empty() || ranks.front() < inputs[i - 1].n) return "";
  return fmt::format(
      "; ranks {} and up run it, which no smaller input has; trace one more rank count above {} too, so that "
      "two inputs show it",
      ranks.front(), ranks.front());
}

// Each thread-0 class must show at two rank counts or more: a class seen at
// one input only, beside classes seen everywhere, is a run that did
// something the others did not.
void check_recurring(const std::vector<Input>& inputs, const Classes& c) {
  for (const ThreadClasses& t : c.threads) {
    for (size_t ci : t.classes) {
      const StreamClass& k = c.all[ci];
      std::vector<size_t> seen;
      for (size_t i = 0; i < k.at.size(); ++i)
        if (!k.at[i].empty()) seen.push_back(i);
      if (seen.size() >= 2) continue;
      size_t i = seen.front();
      // The most similar stream of the same thread at another input.
      const trace::Stream* other = nullptr;
      size_t other_input = 0, best = 0;
      for (size_t cj : t.classes)
        for (size_t j = 0; j < inputs.size(); ++j)
          if (j != i && !c.all[cj].at[j].empty()) {
            size_t p = common_prefix(*k.at[i].front(), *c.all[cj].at[j].front());
            if (!other || p > best) {
              other = c.all[cj].at[j].front();
              other_input = j;
              best = p;
            }
          }
      std::string diff =
          other ? fmt::format(": against {} (ranks {}), {}", inputs[other_input].name,
                              fmt::join(other->rank_list(), ","), first_difference(*k.at[i].front(), *other))
                : "";
      std::string why = pruning_difference(inputs, i, *k.at[i].front());
      if (why.empty()) why = largest_only(inputs, i, k.ranks[i]);
      if (!why.empty())
        throw ToolError(fmt::format("{}: thread {} of ranks {} has a structure no other input has{}{}", inputs[i].name,
                                    t.thread, fmt::join(k.ranks[i], ","), diff, why));
      throw ToolError(
          fmt::format("{}: thread {} of ranks {} has a structure no other input has{}; the inputs are "
                      "not the same program with the same arguments, or it behaves differently at "
                      "these rank counts, or the runs did not start from the same files (a file one run "
                      "found and another created: MPI-IO opens them differently)",
                      inputs[i].name, t.thread, fmt::join(k.ranks[i], ","), diff));
    }
  }
}

}  // namespace

std::string StreamClass::name() const {
  std::string first = shape->leaves.empty() ? "no calls" : std::string(trace::name(shape->leaves.front().kind));
  return fmt::format("stream of thread {} ({} positions, first {})", shape->thread, shape->leaves.size(), first);
}

std::string first_difference(const trace::Stream& a, const trace::Stream& b) {
  if (a.thread != b.thread) return fmt::format("thread {} against thread {}", a.thread, b.thread);
  size_t i = common_prefix(a, b);
  if (i < a.leaves.size() && i < b.leaves.size())
    return fmt::format("position {}: {} against {}", i, leaf_text(a.leaves[i]), leaf_text(b.leaves[i]));
  if (a.leaves.size() != b.leaves.size())
    return fmt::format("{} positions against {} (position {} is {})", a.leaves.size(), b.leaves.size(), i,
                       leaf_text(i < a.leaves.size() ? a.leaves[i] : b.leaves[i]));
  if (a.nodes.size() != b.nodes.size())
    return fmt::format("{} loop-tree nodes against {}", a.nodes.size(), b.nodes.size());
  for (size_t n = 0; n < a.nodes.size(); ++n)
    if (a.nodes[n].loop != b.nodes[n].loop || a.nodes[n].index != b.nodes[n].index)
      return fmt::format("loop tree differs at node {} ({} against {})", n,
                         a.nodes[n].loop ? fmt::format("a loop over {} nodes", a.nodes[n].index) : "a call",
                         b.nodes[n].loop ? fmt::format("a loop over {} nodes", b.nodes[n].index) : "a call");
  if (a.lossless != b.lossless) return "lossless timing in one, statistics in the other";
  return "same structure";
}

Classes find_classes(const std::vector<Input>& inputs) {
  Classes c;
  std::set<uint32_t> threads;
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (const trace::Stream& s : inputs[i].plan.streams) {
      threads.insert(s.thread);
      auto it = std::find_if(c.all.begin(), c.all.end(),
                             [&](const StreamClass& k) { return merge::same_structure(*k.shape, s); });
      if (it == c.all.end()) {
        c.all.push_back({&s, std::vector<std::vector<const trace::Stream*>>(inputs.size()),
                         std::vector<std::vector<int64_t>>(inputs.size())});
        it = c.all.end() - 1;
      }
      it->at[i].push_back(&s);
      std::vector<int64_t> ranks = s.rank_list();
      it->ranks[i].insert(it->ranks[i].end(), ranks.begin(), ranks.end());
    }
  }
  for (StreamClass& k : c.all)
    for (auto& r : k.ranks) std::sort(r.begin(), r.end());
  for (uint32_t t : threads) {
    ThreadClasses tc{t, {}, {}};
    std::vector<std::vector<bool>> has;
    for (const Input& in : inputs) has.emplace_back(size_t(in.n), false);
    for (size_t ci = 0; ci < c.all.size(); ++ci) {
      if (c.all[ci].shape->thread != t) continue;
      tc.classes.push_back(ci);
      for (size_t i = 0; i < inputs.size(); ++i)
        for (int64_t r : c.all[ci].ranks[i]) {
          if (r < 0 || r >= inputs[i].n || has[i][size_t(r)])
            throw ToolError(
                fmt::format("{}: rank {} has two streams of thread {} (or a rank out of range)", inputs[i].name, r, t));
          has[i][size_t(r)] = true;
        }
    }
    tc.none.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i)
      for (int64_t r = 0; r < inputs[i].n; ++r)
        if (!has[i][size_t(r)]) tc.none[i].push_back(r);
    c.threads.push_back(std::move(tc));
  }
  check_recurring(inputs, c);
  return c;
}

}  // namespace mpior::extrap
