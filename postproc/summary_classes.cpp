#include "postproc/summary_classes.hpp"

#include <map>

#include "trace/value_seq.hpp"

namespace mpior::postproc {

namespace {

// The stream's rank-variant lists (Stream::ranked) that a value the summary
// reads comes from: all but those of file offsets.
std::vector<bool> read_variants(const trace::Stream& s) {
  std::vector<bool> read(s.ranked.size(), false);
  auto mark = [&read](const trace::Param& p) {
    if (p.ranked >= 0) read[size_t(p.ranked)] = true;
  };
  for (const trace::Node& n : s.nodes) mark(n.iters);
  for (const trace::Leaf& l : s.leaves) {
    bool file_call = trace::is_io(l.kind) || trace::is_mpiio(l.kind);
    for (int i = 0; i < trace::kNumArgs; ++i)
      if (!(file_call && i == trace::arg::offset)) mark(l.args[size_t(i)]);
    mark(l.ret);
    mark(l.err);
    mark(l.exact_gap);
    mark(l.exact_dur);
  }
  return read;
}

}  // namespace

std::vector<std::vector<int64_t>> summary_rank_classes(const trace::Plan& plan, const trace::Stream& s) {
  std::vector<int64_t> ranks = s.rank_list();
  std::vector<bool> read = read_variants(s);
  // key per rank: its file table's length, then per variant list read, the
  // variant that holds the rank (-1 none) and the rank itself when that
  // variant adds a multiple of it
  std::vector<std::vector<int64_t>> keys(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) keys[i].push_back(int64_t(plan.ranks[size_t(ranks[i])].files.size()));
  for (size_t g = 0; g < s.ranked.size(); ++g) {
    if (!read[g]) continue;
    const std::vector<trace::RankVariant>& variants = s.ranked[g];
    for (size_t i = 0; i < ranks.size(); ++i) {
      int64_t which = -1;
      for (size_t v = 0; v < variants.size() && which < 0; ++v)
        if (trace::seq_contains(s.view(variants[v].ranks), ranks[i])) which = int64_t(v);
      keys[i].push_back(which);
      if (which >= 0 && variants[size_t(which)].scale != 0) keys[i].push_back(ranks[i]);
    }
  }
  std::map<std::vector<int64_t>, size_t> class_of;
  std::vector<std::vector<int64_t>> classes;
  for (size_t i = 0; i < ranks.size(); ++i) {
    auto [it, added] = class_of.try_emplace(std::move(keys[i]), classes.size());
    if (added) classes.emplace_back();
    classes[it->second].push_back(ranks[i]);
  }
  return classes;
}

}  // namespace mpior::postproc
