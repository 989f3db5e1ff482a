#include "merge/rank_runs.hpp"

#include <algorithm>

namespace mpior::merge {

namespace {
// Wrapping, as the sequence cursor adds (a damaged list must not overflow).
int64_t wadd(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t wsub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
int64_t wmul(int64_t a, uint64_t b) { return int64_t(uint64_t(a) * b); }
}  // namespace

RankRuns RankRuns::of(std::span<const trace::SeqItem> items) {
  RankRuns out;
  out.walk(items, 0);
  return out;
}

void RankRuns::walk(std::span<const trace::SeqItem> items, int64_t base) {
  for (size_t i = 0; i < items.size();) {
    const trace::SeqItem& it = items[i];
    if (!it.is_loop()) {
      append(wadd(base, it.v), 0, 1);
      i += 1;
      continue;
    }
    size_t end = std::min(items.size(), i + 1 + size_t(it.span));
    if (it.span == 1 && end == i + 2 && !items[i + 1].is_loop()) {
      append(wadd(base, items[i + 1].v), it.v, it.count);
    } else if (end > i + 1) {
      for (uint32_t k = 0; k < it.count; ++k) walk(items.subspan(i + 1, end - i - 1), wadd(base, wmul(it.v, k)));
    }
    i = end;
  }
}

void RankRuns::append(int64_t first, int64_t stride, uint64_t count) {
  if (count == 0) return;
  if (count == 1) stride = 0;
  if (!runs_.empty()) {
    Run& last = runs_.back();
    if (first <= last.last() || (count > 1 && stride <= 0)) ascending_ = false;
    if (last.count == 1 && (count == 1 || stride == wsub(first, last.first))) {
      last.stride = wsub(first, last.first);
      last.count += count;
      size_ += count;
      return;
    }
    if (first == wadd(last.last(), last.stride) && (count == 1 || stride == last.stride)) {
      last.count += count;
      size_ += count;
      return;
    }
  } else if (count > 1 && stride <= 0) {
    ascending_ = false;
  }
  runs_.push_back({first, stride, count});
  size_ += count;
}

void RankRuns::append(const RankRuns& o) {
  for (const Run& r : o.runs_) append(r.first, r.stride, r.count);
}

std::vector<int64_t> RankRuns::expand() const {
  std::vector<int64_t> out;
  out.reserve(size_);
  for (const Run& r : runs_)
    for (uint64_t k = 0; k < r.count; ++k) out.push_back(wadd(r.first, wmul(r.stride, k)));
  return out;
}

trace::SeqRef RankRuns::store(trace::SeqArena& arena) const {
  trace::SeqBuilder b;  // add_rank_list's
  for (const Run& r : runs_) b.append_stride(r.first, r.stride, r.count);
  return arena.add(b.items());
}

}  // namespace mpior::merge
