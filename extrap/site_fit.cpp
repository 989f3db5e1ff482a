#include "extrap/site_fit.hpp"

#include <set>

#include "extrap/dealt.hpp"
#include "extrap/incidental.hpp"

namespace mpior::extrap {

size_t rank_counts(const std::vector<SeqSample>& samples) {
  std::set<int64_t> n;
  for (const SeqSample& s : samples) n.insert(s.n);
  return n.size();
}

std::vector<SeqSample> site_samples(const std::vector<Input>& inputs, const trace::Stream& shape, size_t leaf, int f) {
  SiteKey key = site_of(shape, leaf);
  std::vector<SeqSample> out;
  for (const Input& in : inputs)
    for (const trace::Stream& s : in.plan.streams) {
      if (s.thread != key.thread) continue;
      for (size_t l = 0; l < s.leaves.size(); ++l) {
        if (site_of(s, l) != key) continue;
        const trace::Leaf& at = s.leaves[l];
        const trace::Param& p = f == kRetField ? at.ret : f == kErrField ? at.err : at.args[size_t(f)];
        for (int64_t r : s.rank_list()) {
          auto [items, offset] = rank_view(s, p, r);
          out.push_back({r, in.n, items, offset});
        }
        break;
      }
    }
  return out;
}

}  // namespace mpior::extrap
