#include "extrap/prune_align.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "merge/rebuild.hpp"

namespace mpior::extrap {

namespace {

using Site = std::tuple<uint32_t, trace::Kind, uint64_t, uint8_t>;  // thread, kind, call site, depth

std::set<Site> mpi_sites(const trace::Plan& plan) {
  std::set<Site> out;
  for (const trace::Stream& s : plan.streams)
    for (const trace::Leaf& l : s.leaves)
      if (trace::is_meeting(trace::info(l.kind).op)) out.insert({s.thread, l.kind, l.callsite, l.depth});
  return out;
}

// The sites every input either keeps or pruned all calls of its kind from,
// kept by some and not by others.
std::set<Site> divergent(const std::vector<Input>& inputs, const std::vector<std::set<Site>>& sites) {
  std::set<Site> all, out;
  for (const auto& s : sites) all.insert(s.begin(), s.end());
  for (const Site& site : all) {
    bool somewhere_not = false, explained = true;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (sites[i].count(site)) continue;
      somewhere_not = true;
      explained = explained && inputs[i].plan.pruned[size_t(std::get<1>(site))].calls > 0;
    }
    if (somewhere_not && explained) out.insert(site);
  }
  return out;
}

// One rank's stream again without the calls at `drop` (and what they nest),
// counted as pruned.
trace::Stream without(const trace::Stream& s, int32_t rank, const std::vector<bool>& drop, trace::Plan& plan) {
  int skip_below = -1;  // depth of a dropped call whose nested events follow
  return merge::rebuilt(s, rank, [&](const trace::Event& ev, trace::RawEvent&) {
    if (skip_below >= 0 && ev.depth > skip_below) return false;
    skip_below = -1;
    if (!drop[ev.leaf]) return true;
    skip_below = ev.depth;
    ++plan.pruned[size_t(ev.kind)].calls;
    plan.pruned[size_t(ev.kind)].time_ns += std::max<int64_t>(0, ev.dur_ns);
    return false;
  });
}

size_t prune_sites(Input& in, const std::set<Site>& sites) {
  size_t before = 0, after = 0;
  for (const auto& t : in.plan.pruned) before += t.calls;
  std::vector<trace::Stream> out, rebuilt;
  for (const trace::Stream& s : in.plan.streams) {
    std::vector<bool> drop(s.leaves.size(), false);
    bool any = false;
    for (size_t l = 0; l < s.leaves.size(); ++l) {
      const trace::Leaf& leaf = s.leaves[l];
      drop[l] = sites.count({s.thread, leaf.kind, leaf.callsite, leaf.depth}) > 0;
      any = any || drop[l];
    }
    if (!any) {
      out.push_back(s);
      continue;
    }
    for (int64_t r : s.rank_list()) rebuilt.push_back(without(s, int32_t(r), drop, in.plan));
  }
  for (trace::Stream& s : merge::merge_rebuilt(std::move(rebuilt))) out.push_back(std::move(s));
  in.plan.streams = std::move(out);
  for (const auto& t : in.plan.pruned) after += t.calls;
  return after - before;
}

}  // namespace

std::vector<std::string> align_pruning(std::vector<Input>& inputs) {
  std::vector<std::set<Site>> sites;
  for (const Input& in : inputs) sites.push_back(mpi_sites(in.plan));
  std::vector<std::string> out;
  for (const Site& site : divergent(inputs, sites)) {
    std::vector<int64_t> kept;
    size_t pruned = 0;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (sites[i].count(site)) {
        kept.push_back(inputs[i].n);
        pruned += prune_sites(inputs[i], {site});
      }
    out.push_back(
        fmt::format("{} at call site {:#x}: kept at {} ranks, every call pruned at the other inputs (online "
                    "pruning decides per run); pruned at every input, {} calls",
                    trace::name(std::get<1>(site)), std::get<2>(site), fmt::join(kept, ", "), pruned));
  }
  return out;
}

}  // namespace mpior::extrap
