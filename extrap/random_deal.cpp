#include "extrap/random_deal.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "extrap/dealt.hpp"
#include "extrap/incidental.hpp"
#include "extrap/permuted.hpp"

namespace mpior::extrap {

namespace {

const trace::Param& field_of(const trace::Leaf& l, int f) {
  return f == kRetField ? l.ret : f == kErrField ? l.err : l.args[size_t(f)];
}

// Every rank's values at the position `key` of one input, appended to out;
// the number of ranks that have the position.
int64_t collect(const Input& in, const SiteKey& key, int f, std::vector<int64_t>& out) {
  int64_t ranks = 0;
  for (const trace::Stream& s : in.plan.streams) {
    if (s.thread != key.thread) continue;
    for (size_t l = 0; l < s.leaves.size(); ++l) {
      if (site_of(s, l) != key) continue;
      for (int64_t r : s.rank_list()) {
        auto [items, offset] = rank_view(s, field_of(s.leaves[l], f), r);
        for (int64_t v : trace::seq_expand(items)) out.push_back(v + offset);
        ++ranks;
      }
      break;
    }
  }
  return ranks;
}

}  // namespace

std::optional<std::vector<RandomUnion>> random_unions(const std::vector<Input>& inputs, const trace::Stream& shape,
                                                      size_t leaf, int f, std::string* why) {
  SiteKey key = site_of(shape, leaf);
  std::vector<RandomUnion> out;
  for (const Input& in : inputs) {
    std::vector<int64_t> all;
    int64_t ranks = collect(in, key, f, all);
    if (ranks != in.n) {
      *why = fmt::format("at {} ranks only {} ranks make the call", in.n, ranks);
      return std::nullopt;
    }
    if (all.size() % size_t(in.n) != 0) {
      *why = fmt::format("at {} ranks the ranks' {} values together are no multiple of {}", in.n, all.size(), in.n);
      return std::nullopt;
    }
    std::sort(all.begin(), all.end());
    trace::SeqBuilder b;
    for (int64_t v : all) b.append(v);
    out.push_back({in.n, b.items(), int64_t(all.size()) / in.n});
  }
  return out;
}

std::vector<int64_t> random_deal_order(std::span<const trace::SeqItem> all, int64_t n) {
  std::vector<int64_t> v = trace::seq_expand(all);
  shuffle_values(v, -1, n);
  return v;
}

std::string not_random_deal(std::string_view what) {
  size_t at = what.find(kNotRandomDeal);
  return at == std::string_view::npos ? "" : std::string(what.substr(at));
}

}  // namespace mpior::extrap
