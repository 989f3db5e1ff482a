// A stream class seen at two rank counts only leaves models apart that agree
// there and part at the target: IOR -a HDF5 -c traced at 2, 4, 8 and 12
// ranks has the ranks that write no metadata entry (a class of their own) at
// 8 and 12 only, one of them at 8, where a rank-modulo model fits their read
// offset as well as the right one. The same position of the other classes
// (the same site: kind, call site, depth, ordinal) is the same expression of
// the program at other ranks, so a checked fit over every rank of every
// input, when one exists, is the model consistent with all of them.
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

// Every rank's values of field f (dealt.hpp's numbering) at the site of
// position `leaf` of `shape`, over every input, whatever its class.
std::vector<SeqSample> site_samples(const std::vector<Input>& inputs, const trace::Stream& shape, size_t leaf, int f);

// The checked exact fit of value(s) over the samples of `site` that have the
// class's item shape (another class may count its calls from the site
// differently), when one exists; else `fit`, the class's own.
template <class Value>
Fit site_consistent(Fit fit, const std::vector<SeqSample>& site, std::span<const trace::SeqItem> shape, Value value) {
  std::vector<Sample> all;
  for (const SeqSample& s : site) {
    if (same_shape(shape, s.items)) all.push_back({s.r, s.n, value(s)});
  }
  std::optional<Fit> f = all.empty() ? std::nullopt : fit_exact(all);
  return f && !f->determined ? std::move(*f) : std::move(fit);
}

}  // namespace mpior::extrap
