#include "postproc/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "merge/merge_params.hpp"
#include "trace/cursor.hpp"
#include "trace/text.hpp"

namespace mpior::postproc {

namespace {

// Per rank: thread -> stream index.
std::vector<std::map<uint32_t, size_t>> streams_by_rank(const trace::Plan& p) {
  std::vector<std::map<uint32_t, size_t>> out(p.ranks.size());
  for (size_t i = 0; i < p.streams.size(); ++i)
    for (int64_t r : p.streams[i].rank_list())
      if (r >= 0 && size_t(r) < out.size()) out[size_t(r)][p.streams[i].thread] = i;
  return out;
}

std::string file_text(const trace::Plan& p, int32_t id) {
  if (id < 0 || size_t(id) >= p.files.size()) return fmt::format("bad file id {}", id);
  const trace::PlanFile& f = p.files[size_t(id)];
  return fmt::format("{} (created {}, existed {}, directory {}, size before {})", f.path, f.created, f.existed,
                     f.directory, f.initial_size);
}

std::string comm_text(const trace::Plan& p, int32_t id) {
  if (id < 0 || size_t(id) >= p.comms.size()) return "none";
  return fmt::format("[{}]", fmt::join(p.comms[size_t(id)].members, ","));
}

std::string compare_tables(const trace::Plan& a, const trace::Plan& b, size_t r) {
  const trace::PlanRank &x = a.ranks[r], &y = b.ranks[r];
  if (x.files.size() != y.files.size())
    return fmt::format("rank {}: {} files against {}", r, x.files.size(), y.files.size());
  for (size_t j = 0; j < x.files.size(); ++j)
    if (file_text(a, x.files[j]) != file_text(b, y.files[j]))
      return fmt::format("rank {}, file {}: {} against {}", r, j, file_text(a, x.files[j]), file_text(b, y.files[j]));
  if (x.comms.size() != y.comms.size())
    return fmt::format("rank {}: {} communicators against {}", r, x.comms.size(), y.comms.size());
  for (size_t j = 0; j < x.comms.size(); ++j)
    if (comm_text(a, x.comms[j]) != comm_text(b, y.comms[j]))
      return fmt::format("rank {}, communicator {}: members {} against {}", r, j, comm_text(a, x.comms[j]),
                         comm_text(b, y.comms[j]));
  return "";
}

std::string compare_structure(const trace::Stream& a, const trace::Stream& b) {
  if (a.leaves.size() != b.leaves.size())
    return fmt::format("{} positions against {}", a.leaves.size(), b.leaves.size());
  if (a.nodes.size() != b.nodes.size())
    return fmt::format("{} loop-tree nodes against {}", a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i)
    if (a.nodes[i].loop != b.nodes[i].loop || a.nodes[i].index != b.nodes[i].index)
      return fmt::format("loop tree differs at node {}", i);
  for (size_t i = 0; i < a.leaves.size(); ++i) {
    const trace::Leaf &x = a.leaves[i], &y = b.leaves[i];
    if (x.kind != y.kind || x.depth != y.depth || x.flags != y.flags || x.callsite != y.callsite)
      return fmt::format("position {}: {} (call site {:#x}) against {} (call site {:#x})", i, trace::name(x.kind),
                         x.callsite, trace::name(y.kind), y.callsite);
  }
  return "";
}

// Rank r's trip counts of a loop, one per entry into it.
std::vector<int64_t> trip_counts(const trace::Stream& s, const trace::Param& p, int32_t r) {
  std::vector<int64_t> out;
  if (p.ranked < 0) return trace::seq_expand(merge::canonical_seq(s, p));
  for (const trace::RankVariant& v : s.ranked[size_t(p.ranked)])
    if (trace::seq_contains(s.view(v.ranks), r)) {
      if (v.seq.len) out = trace::seq_expand(s.view(v.seq));
      for (int64_t& x : out) x += v.scale * r;
      return out;
    }
  return out;
}

// A leaf, or a loop's start (open) or end.
struct ShapeToken {
  const trace::Leaf* leaf = nullptr;
  bool open = false;
};

// The loop tree as rank r runs it, a loop that runs once at each entry
// dissolved into its body: the tracer folds such a loop into a plain call,
// an extrapolation may keep it (a loop of one at the target).
std::vector<ShapeToken> rank_shape(const trace::Stream& s, int32_t r) {
  std::vector<ShapeToken> out;
  std::vector<size_t> ends;  // of the loops kept, innermost last
  for (size_t i = 0; i <= s.nodes.size(); ++i) {
    for (; !ends.empty() && i >= ends.back(); ends.pop_back()) out.push_back({});
    if (i == s.nodes.size()) break;
    const trace::Node& node = s.nodes[i];
    if (!node.loop) {
      out.push_back({&s.leaves[node.index]});
      continue;
    }
    std::vector<int64_t> trips = trip_counts(s, node.iters, r);
    if (!trips.empty() && std::all_of(trips.begin(), trips.end(), [](int64_t t) { return t == 1; })) continue;
    out.push_back({nullptr, true});
    ends.push_back(i + 1 + node.index);
  }
  return out;
}

bool same_rank_shape(const trace::Stream& a, const trace::Stream& b, int32_t r) {
  std::vector<ShapeToken> x = rank_shape(a, r), y = rank_shape(b, r);
  return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](const ShapeToken& p, const ShapeToken& q) {
    if (!p.leaf || !q.leaf) return !p.leaf && !q.leaf && p.open == q.open;
    return p.leaf->kind == q.leaf->kind && p.leaf->depth == q.leaf->depth && p.leaf->flags == q.leaf->flags &&
           p.leaf->callsite == q.leaf->callsite;
  });
}

// Handle values (fds, stream ids) are names: they must correspond one to one
// while open. A call that returns a handle names a new file with it: what the
// number named before is closed, perhaps by a call not traced (the MPI
// library's sockets take and free fds as its connections come and go).
class HandleMap {
 public:
  bool same(int64_t a, int64_t b) {
    if (a < 0 || b < 0) return a == b;
    auto [ia, fa] = ab_.emplace(a, b);
    auto [ib, fb] = ba_.emplace(b, a);
    return ia->second == b && ib->second == a;
  }
  bool bind(int64_t a, int64_t b) {
    if (a < 0 || b < 0) return a == b;
    if (auto old = ab_.find(a); old != ab_.end()) ba_.erase(old->second);
    if (auto old = ba_.find(b); old != ba_.end()) ab_.erase(old->second);
    ab_[a] = b, ba_[b] = a;
    return true;
  }

 private:
  std::map<int64_t, int64_t> ab_, ba_;
};

std::string compare_event(const trace::Event& x, const trace::Event& y, uint64_t i, HandleMap& handles) {
  std::string what = fmt::format("event {} ({})", i, trace::name(x.kind));
  if (x.kind != y.kind) return fmt::format("event {}: {} against {}", i, trace::name(x.kind), trace::name(y.kind));
  bool returns_handle = trace::returns_handle(x.kind);
  if (returns_handle && !handles.bind(x.ret, y.ret))
    return fmt::format("{}: return value {} against {}", what, x.ret, y.ret);
  for (int s = 0; s < trace::kNumArgs; ++s) {
    int64_t a = x.args[size_t(s)], b = y.args[size_t(s)];
    if (trace::is_handle_slot(x.kind, s) ? !handles.same(a, b) : a != b)
      return fmt::format("{}: {} {} against {}", what, trace::arg_name(x.kind, s), a, b);
  }
  if (!returns_handle && x.ret != y.ret) return fmt::format("{}: return value {} against {}", what, x.ret, y.ret);
  if (x.err != y.err) return fmt::format("{}: errno {} against {}", what, x.err, y.err);
  return "";
}

std::string compare_events(const trace::Stream& a, const trace::Stream& b, int32_t rank) {
  trace::EventCursor ca(a, rank), cb(b, rank);
  trace::Event x, y;
  HandleMap handles;
  for (uint64_t i = 0;; ++i) {
    bool more_a = ca.next(x), more_b = cb.next(y);
    if (!more_a || !more_b) {
      if (more_a == more_b) return "";
      return fmt::format("event {}: {} against the end of the stream", i, trace::name(more_a ? x.kind : y.kind));
    }
    if (std::string d = compare_event(x, y, i, handles); !d.empty()) return d;
  }
}

}  // namespace

std::string compare_plans(const trace::Plan& a, const trace::Plan& b, bool events_only) {
  if (a.ranks.size() != b.ranks.size()) return fmt::format("{} ranks against {}", a.ranks.size(), b.ranks.size());
  auto sa = streams_by_rank(a), sb = streams_by_rank(b);
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    if (std::string d = compare_tables(a, b, r); !d.empty()) return d;
    for (const auto& [thread, i] : sa[r])
      if (!sb[r].count(thread)) return fmt::format("rank {} has a thread {} in the first plan only", r, thread);
    for (const auto& [thread, i] : sb[r])
      if (!sa[r].count(thread)) return fmt::format("rank {} has a thread {} in the second plan only", r, thread);
    for (const auto& [thread, i] : sa[r]) {
      const trace::Stream &x = a.streams[i], &y = b.streams[sb[r][thread]];
      std::string d = events_only ? "" : compare_structure(x, y);
      if (!d.empty() && same_rank_shape(x, y, int32_t(r))) d.clear();
      if (d.empty()) d = compare_events(x, y, int32_t(r));
      if (!d.empty()) return fmt::format("rank {}, thread {}: {}", r, thread, d);
    }
  }
  return "";
}

}  // namespace mpior::postproc
