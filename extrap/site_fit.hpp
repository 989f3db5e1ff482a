// A stream class seen at two rank counts only, or fitted by a model with a
// searched parameter, may leave models apart that agree on its samples and
// part at the target. IOR -a HDF5 -c traced at 2, 4, 8 and 12 ranks has the
// ranks that write no metadata entry (a class of their own) at 8 and 12
// only, rank 7 alone at 8, and 985088 + 65536*((r+9) mod n) fits their read
// offset as well as 2048 + 65536*(r+n); traced at 2, 4, 8 and 16, the ranks
// that write one (1-6 at 8 and 16, 3 at 4) fit 460800 + 65536*((r+9) mod n).
// The same position of the other classes (the same site: kind, call site,
// depth, ordinal) is the same expression of the program at other ranks: of
// the models that fit the class exactly together with one other stream's
// samples, the one that reproduces the most of the site's samples is the
// model consistent with them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "extrap/models.hpp"
#include "extrap/seq_fit.hpp"
#include "extrap/stream_classes.hpp"

namespace mpior::extrap {

// The number of distinct rank counts among the samples.
size_t rank_counts(const std::vector<SeqSample>& samples);

// Whether other exact models may fit a class's samples as well as `fit`
// and part at the target: samples from two rank counts only, or a model
// with a searched parameter (a rank shift, a group size), which fits ranks
// that all lie on one side of where it wraps.
bool ambiguous(const Fit& fit, size_t rank_counts);

// Every rank's values of field f (dealt.hpp's numbering) at the site of
// position `leaf` of `shape`, over every input, whatever its class: one
// group per stream of each input.
std::vector<std::vector<SeqSample>> site_samples(const std::vector<Input>& inputs, const trace::Stream& shape,
                                                 size_t leaf, int f);

// What chose a fit: the samples it fits exactly (the class's own, with the
// group whose joint fit won) and the site's groups that scored it.
struct SiteEvidence {
  std::vector<Sample> exact;
  std::vector<std::vector<Sample>> groups;
};

// How many samples of the groups the fit reproduces.
size_t site_score(const Fit& fit, const std::vector<std::vector<Sample>>& groups);

// Of `fit` (the class's own, from `own`) and the checked exact fits of `own`
// with each group of ev.groups, the one that reproduces the most samples of
// all groups; `fit` on a tie. ev.exact: the samples the one taken fits.
Fit most_consistent(Fit fit, std::span<const Sample> own, SiteEvidence& ev);

// most_consistent() over value(s) of the site's samples that have the
// class's item shape (another class may count its calls from the site
// differently).
template <class Value>
Fit site_consistent(Fit fit, std::span<const Sample> own, const std::vector<std::vector<SeqSample>>& site,
                    std::span<const trace::SeqItem> shape, Value value, SiteEvidence& ev) {
  ev.exact.assign(own.begin(), own.end());
  if (site.empty()) return fit;
  for (const std::vector<SeqSample>& g : site) {
    ev.groups.emplace_back();
    for (const SeqSample& s : g)
      if (same_shape(shape, s.items)) ev.groups.back().push_back({s.r, s.n, value(s)});
  }
  return most_consistent(std::move(fit), own, ev);
}

}  // namespace mpior::extrap
