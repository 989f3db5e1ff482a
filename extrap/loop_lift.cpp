#include "extrap/loop_lift.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "merge/merge.hpp"

namespace mpior::extrap {

namespace {

// Matches the nodes of `a` against those of `b`, where `b` may lack some of
// a's loops (their bodies inline). to_b: per node of a, its node in b, or -1
// for a loop b lacks.
class Matcher {
 public:
  Matcher(const trace::Stream& a, const trace::Stream& b) : a_(a.nodes), b_(b.nodes), to_b(a.nodes.size(), -1) {}

  bool run() {
    std::optional<size_t> end = match(0, a_.size(), 0, b_.size());
    return end && *end == b_.size();
  }

  const std::vector<trace::Node>& a_;
  const std::vector<trace::Node>& b_;
  std::vector<int64_t> to_b;

 private:
  // a's nodes [ia, ea) against b's from ib (up to eb): b's position after.
  std::optional<size_t> match(size_t ia, size_t ea, size_t ib, size_t eb) {
    while (ia < ea) {
      const trace::Node& n = a_[ia];
      if (!n.loop) {
        if (ib >= eb || b_[ib].loop || b_[ib].index != n.index) return std::nullopt;
        to_b[ia++] = int64_t(ib++);
        continue;
      }
      size_t body_end = ia + 1 + n.index;
      if (ib < eb && b_[ib].loop) {
        std::vector<int64_t> saved = to_b;
        size_t b_end = ib + 1 + b_[ib].index;
        std::optional<size_t> r = match(ia + 1, body_end, ib + 1, b_end);
        if (r && *r == b_end) {
          to_b[ia] = int64_t(ib);
          ia = body_end;
          ib = b_end;
          continue;
        }
        to_b = std::move(saved);
      }
      to_b[ia] = -1;  // b lacks this loop: its body runs once, inline
      std::optional<size_t> r = match(ia + 1, body_end, ib, eb);
      if (!r) return std::nullopt;
      ia = body_end;
      ib = *r;
    }
    return ib;
  }
};

bool same_leaves(const trace::Stream& a, const trace::Stream& b) {
  if (a.thread != b.thread || a.lossless != b.lossless || a.leaves.size() != b.leaves.size()) return false;
  for (size_t i = 0; i < a.leaves.size(); ++i) {
    const trace::Leaf &x = a.leaves[i], &y = b.leaves[i];
    if (x.kind != y.kind || x.callsite != y.callsite || x.depth != y.depth || x.flags != y.flags) return false;
  }
  return true;
}

// b rewritten with a's loop tree, the loops it lacks running once; false
// (b untouched) when b is not a without some loops.
bool lift(const trace::Stream& a, trace::Stream& b) {
  if (!same_leaves(a, b) || a.nodes.size() <= b.nodes.size()) return false;
  Matcher m(a, b);
  if (!m.run()) return false;
  std::vector<trace::Node> nodes;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    if (m.to_b[i] >= 0) {
      trace::Node n = b.nodes[size_t(m.to_b[i])];
      n.index = a.nodes[i].index;  // a loop's span grows with the loops put back inside it
      nodes.push_back(n);
    } else {
      nodes.push_back({true, a.nodes[i].index, trace::Param{b.values.add_scalar(1), -1}});
    }
  }
  trace::Stream lifted = b;
  lifted.nodes = std::move(nodes);
  if (!merge::same_structure(a, lifted)) return false;
  b = std::move(lifted);
  return true;
}

struct Group {
  const trace::Stream* shape;
  std::vector<std::pair<size_t, size_t>> members;  // (input, stream)
  std::set<size_t> inputs;
};

std::vector<Group> groups_of(const std::vector<Input>& inputs) {
  std::vector<Group> out;
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t s = 0; s < inputs[i].plan.streams.size(); ++s) {
      const trace::Stream& st = inputs[i].plan.streams[s];
      auto it =
          std::find_if(out.begin(), out.end(), [&](const Group& g) { return merge::same_structure(*g.shape, st); });
      if (it == out.end()) it = out.insert(out.end(), Group{&st, {}, {}});
      it->members.emplace_back(i, s);
      it->inputs.insert(i);
    }
  return out;
}

}  // namespace

size_t lift_lone_loops(std::vector<Input>& inputs) {
  std::vector<Group> groups = groups_of(inputs);
  size_t lifted = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    trace::Stream lone = *groups[g].shape;
    for (size_t h = 0; h < groups.size(); ++h) {
      if (h == g || !same_leaves(lone, *groups[h].shape)) continue;
      // Seen at one input, or never at an input where the other is (rank
      // 0's loop of HDF5 entries at 2 and 4 ranks, a plain call at 8 and
      // 12): one structure the trace folded differently. Two structures one
      // input shows side by side are two classes (ranks 1 and 2 loop over
      // two entries at 4 ranks, rank 3 writes one), which the rank rules
      // tell apart.
      bool apart = std::none_of(groups[g].inputs.begin(), groups[g].inputs.end(),
                                [&](size_t i) { return groups[h].inputs.count(i) > 0; });
      if (groups[g].inputs.size() != 1 && !apart) continue;
      // Into the shape with more loops: the lone one's, or the others'.
      bool into_lone = lone.nodes.size() > groups[h].shape->nodes.size();
      trace::Stream target = into_lone ? lone : *groups[h].shape;
      const Group& from = into_lone ? groups[h] : groups[g];
      trace::Stream probe = *from.shape;
      if (!lift(target, probe)) continue;
      for (auto [i, s] : from.members) lifted += lift(target, inputs[i].plan.streams[s]) ? 1 : 0;
    }
  }
  return lifted;
}

}  // namespace mpior::extrap
