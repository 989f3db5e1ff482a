#include "extrap/site_fit.hpp"

#include <algorithm>
#include <set>

#include "extrap/dealt.hpp"
#include "extrap/incidental.hpp"

namespace mpior::extrap {

size_t rank_counts(const std::vector<SeqSample>& samples) {
  std::set<int64_t> n;
  for (const SeqSample& s : samples) n.insert(s.n);
  return n.size();
}

bool ambiguous(const Fit& fit, size_t rank_counts) {
  if (rank_counts <= 2) return true;
  return std::any_of(fit.terms.begin(), fit.terms.end(), [](const Term& t) {
    return t.basis == Basis::mod_shift || t.basis == Basis::div_k || t.basis == Basis::mod_k;
  });
}

std::vector<std::vector<SeqSample>> site_samples(const std::vector<Input>& inputs, const trace::Stream& shape,
                                                 size_t leaf, int f) {
  SiteKey key = site_of(shape, leaf);
  std::vector<std::vector<SeqSample>> out;
  for (const Input& in : inputs)
    for (const trace::Stream& s : in.plan.streams) {
      if (s.thread != key.thread) continue;
      for (size_t l = 0; l < s.leaves.size(); ++l) {
        if (site_of(s, l) != key) continue;
        const trace::Leaf& at = s.leaves[l];
        const trace::Param& p = f == kRetField ? at.ret : f == kErrField ? at.err : at.args[size_t(f)];
        out.emplace_back();
        for (int64_t r : s.rank_list()) {
          auto [items, offset] = rank_view(s, p, r);
          out.back().push_back({r, in.n, items, offset});
        }
        break;
      }
    }
  return out;
}

size_t site_score(const Fit& fit, const std::vector<std::vector<Sample>>& groups) {
  size_t k = 0;
  for (const std::vector<Sample>& g : groups)
    for (const Sample& s : g) {
      std::optional<int64_t> v = fit.eval_int(s.r, s.n);
      k += v && *v == s.y;
    }
  return k;
}

Fit most_consistent(Fit fit, std::span<const Sample> own, SiteEvidence& ev) {
  ev.exact.assign(own.begin(), own.end());
  size_t best = site_score(fit, ev.groups);
  for (const std::vector<Sample>& g : ev.groups) {
    if (g.empty()) continue;
    std::vector<Sample> pts(own.begin(), own.end());
    pts.insert(pts.end(), g.begin(), g.end());
    std::optional<Fit> f = fit_exact(pts);
    if (!f || f->determined) continue;
    if (size_t k = site_score(*f, ev.groups); k > best) {
      best = k;
      fit = std::move(*f);
      ev.exact = std::move(pts);
    }
  }
  return fit;
}

}  // namespace mpior::extrap
