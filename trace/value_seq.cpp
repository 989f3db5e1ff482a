#include "trace/value_seq.hpp"

#include <algorithm>
#include <limits>

namespace mpior::trace {

namespace {
// Values are 64-bit patterns (offsets, handles, random ids): shifts and
// strides between them wrap, as the cursor that adds them back does, so a
// sequence of any values round-trips and no arithmetic overflows.
int64_t wadd(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t wsub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
int64_t wmul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }
}  // namespace

SeqRef SeqArena::add(std::span<const SeqItem> items) {
  SeqRef r{uint32_t(items_.size()), uint32_t(items.size())};
  items_.insert(items_.end(), items.begin(), items.end());
  return r;
}

SeqRef SeqArena::add_scalar(int64_t v) {
  if (v == 0) return {};
  SeqItem it{v, 0, 0};
  return add({&it, 1});
}

namespace {

// Saturating: a damaged sequence's length is "too long", never a wrapped small number.
uint64_t sat_add(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}

// Length of the item at i and the index just past it.
uint64_t item_length(std::span<const SeqItem> items, size_t i, size_t* next) {
  const SeqItem& it = items[i];
  if (!it.is_loop()) {
    *next = i + 1;
    return 1;
  }
  uint64_t body = 0, n;
  size_t j = i + 1, end = i + 1 + it.span;
  while (j < end) body = sat_add(body, item_length(items, j, &j));
  *next = end;
  return __builtin_mul_overflow(body, uint64_t(it.count), &n) ? std::numeric_limits<uint64_t>::max() : n;
}

bool valid_range(std::span<const SeqItem> items, size_t begin, size_t end) {
  size_t i = begin;
  while (i < end) {
    const SeqItem& it = items[i];
    if (it.is_loop()) {
      if (it.span == 0 || i + 1 + it.span > end) return false;
      if (!valid_range(items, i + 1, i + 1 + it.span)) return false;
      i += 1 + it.span;
    } else {
      if (it.span != 0) return false;
      ++i;
    }
  }
  return true;
}

}  // namespace

uint64_t seq_length(std::span<const SeqItem> items) {
  uint64_t n = 0;
  size_t i = 0;
  while (i < items.size()) n = sat_add(n, item_length(items, i, &i));
  return n;
}

bool seq_valid(std::span<const SeqItem> items) { return valid_range(items, 0, items.size()); }

std::vector<int64_t> seq_expand(std::span<const SeqItem> items) {
  std::vector<int64_t> out;
  SeqCursor c(items);
  while (!c.at_end()) out.push_back(c.next());
  return out;
}

namespace {

// Whether the range [begin, end) of items, with `base` added to every value,
// holds v. Arithmetic runs are answered by division, so a rank list of 8,192
// ranks costs a few operations, not 8,192.
bool range_contains(std::span<const SeqItem> items, size_t begin, size_t end, int64_t base, int64_t v) {
  for (size_t i = begin; i < end;) {
    const SeqItem& it = items[i];
    if (!it.is_loop()) {
      if (wadd(it.v, base) == v) return true;
      ++i;
      continue;
    }
    size_t body_end = i + 1 + it.span;
    if (it.span == 1 && !items[i + 1].is_loop()) {
      int64_t first = wadd(items[i + 1].v, base);
      if (it.v == 0) {
        if (v == first) return true;
      } else {
        // v = first + k * stride for some k < count, in wrapping arithmetic:
        // test the count candidates' worth by division when it is exact.
        __int128 d = __int128(v) - __int128(first);
        if (d % it.v == 0 && d / it.v >= 0 && d / it.v < __int128(it.count)) return true;
        if (it.count <= 64)  // a run that wraps around: try each element
          for (uint32_t k = 0; k < it.count; ++k)
            if (wadd(first, wmul(int64_t(k), it.v)) == v) return true;
      }
    } else {
      for (uint32_t k = 0; k < it.count; ++k)
        if (range_contains(items, i + 1, body_end, wadd(base, wmul(int64_t(k), it.v)), v)) return true;
    }
    i = body_end;
  }
  return false;
}

// Largest of sign * value over items[i, end): each value is a scalar plus
// iteration * shift for every enclosing loop, so the extreme picks the first
// or the last iteration of each loop independently.
int64_t seq_extreme(std::span<const SeqItem> items, size_t i, size_t end, int64_t sign) {
  int64_t best = INT64_MIN;
  while (i < end) {
    const SeqItem& it = items[i];
    if (!it.is_loop()) {
      best = std::max(best, sign * it.v);
      ++i;
      continue;
    }
    size_t body_end = std::min(end, i + 1 + it.span);
    int64_t body = seq_extreme(items, i + 1, body_end, sign);
    if (body != INT64_MIN) best = std::max(best, body + std::max<int64_t>(0, sign * it.v * (int64_t(it.count) - 1)));
    i = body_end;
  }
  return best;
}

}  // namespace

int64_t seq_max(std::span<const SeqItem> items) { return items.empty() ? 0 : seq_extreme(items, 0, items.size(), 1); }
int64_t seq_min(std::span<const SeqItem> items) { return items.empty() ? 0 : -seq_extreme(items, 0, items.size(), -1); }

bool seq_contains(std::span<const SeqItem> items, int64_t v) { return range_contains(items, 0, items.size(), 0, v); }

void seq_shift(std::span<SeqItem> items, int64_t delta) {
  for (auto& it : items)
    if (!it.is_loop()) it.v = wadd(it.v, delta);
}

bool seq_same_shape(std::span<const SeqItem> a, std::span<const SeqItem> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].count != b[i].count || a[i].span != b[i].span) return false;
    if (a[i].is_loop() && a[i].v != b[i].v) return false;
  }
  return true;
}

// One pass with an early exit: the online builder asks this of every value's
// last few groups, and values that never fold (random offsets) must fail fast.
bool seq_shifted(std::span<const SeqItem> a, std::span<const SeqItem> b, int64_t* shift) {
  if (a.size() != b.size()) return false;
  bool have = false;
  int64_t s = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].count != b[i].count || a[i].span != b[i].span) return false;
    if (a[i].is_loop()) {
      if (a[i].v != b[i].v) return false;
      continue;
    }
    int64_t d = wsub(b[i].v, a[i].v);
    if (!have) {
      s = d;
      have = true;
    } else if (d != s) {
      return false;
    }
  }
  *shift = s;
  return true;
}

// ---- cursor ---------------------------------------------------------------

SeqCursor::SeqCursor(std::span<const SeqItem> items) : items_(items) { descend(); }

bool SeqCursor::at_end() const { return pos_ >= items_.size() && stack_.empty(); }

// Enters loops until pos_ points at a scalar (or the end).
void SeqCursor::descend() {
  while (pos_ < items_.size() && items_[pos_].is_loop()) {
    const SeqItem& it = items_[pos_];
    stack_.push_back({pos_ + 1, pos_ + 1 + it.span, 0, it.count, it.v});
    pos_ += 1;
  }
}

int64_t SeqCursor::next() {
  if (items_.empty()) return 0;
  if (at_end()) return last_;
  last_ = wadd(items_[pos_].v, base_);
  ++pos_;
  // Close finished bodies: next iteration or pop.
  while (!stack_.empty() && pos_ >= stack_.back().end) {
    Frame& f = stack_.back();
    if (f.iter + 1 < f.count) {
      ++f.iter;
      base_ = wadd(base_, f.shift);
      pos_ = f.body;
      break;
    }
    base_ = wsub(base_, wmul(int64_t(f.iter), f.shift));
    stack_.pop_back();
  }
  descend();
  return last_;
}

// ---- online builder -------------------------------------------------------

namespace {

inline uint32_t item_end(const std::vector<SeqItem>& items, uint32_t start) {
  return start + 1 + (items[start].is_loop() ? items[start].span : 0);
}

}  // namespace

void SeqBuilder::append(int64_t v) {
  ++length_;
  tops_.push_back(uint32_t(items_.size()));
  items_.push_back({v, 0, 0});
  if (++scalar_tail_ >= std::max(2 * window_, 3u) && !scalar_fold_possible()) return;
  fold();
}

void SeqBuilder::fold() {
  while (try_extend() || try_arith3() || try_create()) scalar_tail_ = 0;  // a fold leaves a loop last
}

// The last 2 * window groups are scalars (values that have not folded, like
// random offsets): no loop is there to extend, and a repeat of L of them
// needs at least its last value shifted as much as its first. One test per
// L rules out the folds the full search would try.
bool SeqBuilder::scalar_fold_possible() const {
  const SeqItem* x = items_.data() + items_.size() - 1;  // x[-k]: k-th value before the last
  const int64_t d = wsub(x[0].v, x[-1].v);
  if (d == 0 || d == wsub(x[-1].v, x[-2].v)) return true;
  for (unsigned L = 2; L <= window_; ++L)
    if (wsub(x[0].v, x[-long(L)].v) == wsub(x[1 - long(L)].v, x[1 - 2 * long(L)].v)) return true;
  return false;
}

// [.. X, C1..CL] where X is a loop whose body equals C1..CL shifted by
// X.count * X.shift: one more iteration of X.
bool SeqBuilder::try_extend() {
  const size_t nt = tops_.size();
  for (unsigned L = 1; L <= window_ && L < nt; ++L) {
    uint32_t x = tops_[nt - 1 - L];
    const SeqItem& loop = items_[x];
    if (!loop.is_loop() || loop.count == std::numeric_limits<uint32_t>::max()) continue;
    uint32_t cand = tops_[nt - L];
    uint32_t cand_len = uint32_t(items_.size()) - cand;
    if (cand_len != loop.span) continue;
    std::span<const SeqItem> body(items_.data() + x + 1, loop.span);
    std::span<const SeqItem> c(items_.data() + cand, cand_len);
    int64_t s = 0;
    if (!seq_shifted(body, c, &s)) continue;
    // Every body ends in scalars, so s is defined: it must be the shift the
    // next iteration of X would apply.
    if (s != wmul(int64_t(loop.count), loop.v)) continue;
    items_[x].count += 1;
    items_.resize(cand);
    tops_.resize(nt - L);
    return true;
  }
  return false;
}

// Three scalars a, b, c with c - b == b - a != 0: a strided run. (Two scalars
// alone are not folded unless equal: a pair says nothing about a stride, and
// folding it early would hide the period of a repeating pattern.)
bool SeqBuilder::try_arith3() {
  const size_t nt = tops_.size();
  if (nt < 3) return false;
  uint32_t a = tops_[nt - 3], b = tops_[nt - 2], c = tops_[nt - 1];
  if (items_[a].is_loop() || items_[b].is_loop() || items_[c].is_loop()) return false;
  int64_t d = wsub(items_[b].v, items_[a].v);
  if (d == 0 || wsub(items_[c].v, items_[b].v) != d) return false;
  int64_t first = items_[a].v;
  items_.resize(a);
  items_.push_back({d, 3, 1});
  items_.push_back({first, 0, 0});
  tops_.resize(nt - 2);
  return true;
}

// [.. A1..AL, B1..BL] with B equal to A shifted: a new two-iteration loop.
bool SeqBuilder::try_create() {
  const size_t nt = tops_.size();
  for (unsigned L = 1; L <= window_ && 2 * L <= nt; ++L) {
    uint32_t a = tops_[nt - 2 * L], b = tops_[nt - L];
    uint32_t alen = b - a, blen = uint32_t(items_.size()) - b;
    if (alen != blen) continue;
    int64_t s = 0;
    if (alen == 1) {  // two scalars: only equal ones fold here (strides are left to try_arith3)
      if (items_[a] != items_[b]) continue;
    } else if (!seq_shifted({items_.data() + a, alen}, {items_.data() + b, blen}, &s)) {
      continue;
    }
    items_.resize(b);
    items_.insert(items_.begin() + a, SeqItem{s, 2, alen});
    tops_.resize(nt - 2 * L + 1);
    return true;
  }
  return false;
}

}  // namespace mpior::trace

namespace mpior::trace {

void SeqBuilder::append_group(std::span<const SeqItem> group) {
  length_ += seq_length(group);
  tops_.push_back(uint32_t(items_.size()));
  items_.insert(items_.end(), group.begin(), group.end());
  scalar_tail_ = group.size() == 1 ? scalar_tail_ + 1 : 0;
  fold();
}

// The shape append() would give the same values one at a time: pairs of
// unequal values stay scalars, equal pairs and longer strided runs are loops.
void SeqBuilder::append_run(int64_t first, int64_t stride, uint64_t n) {
  if (n == 0) return;
  if (n == 1 || (n == 2 && stride != 0)) {
    append(first);
    if (n == 2) append(first + stride);
    return;
  }
  const uint64_t max_count = std::numeric_limits<uint32_t>::max();
  while (n > 0) {
    uint64_t chunk = n < max_count ? n : max_count;
    if (chunk == 1) {
      append(first);
    } else {
      const SeqItem group[2] = {{stride, uint32_t(chunk), 1}, {first, 0, 0}};
      append_group(group);
    }
    first += int64_t(chunk) * stride;
    n -= chunk;
  }
}

void SeqBuilder::append_stride(int64_t first, int64_t stride, uint64_t n) {
  while (n > 0) {
    uint64_t room = loop_room(first, stride, n);
    if (room == 0) {
      append(first);
      first = wadd(first, stride);
      --n;
      continue;
    }
    items_[tops_.back()].count += uint32_t(room);
    length_ += room;
    first = wadd(first, wmul(int64_t(room), stride));
    n -= room;
  }
}

// append(v) with v the value that continues a last top-level loop of one
// scalar, X = {stride, count, 1} {x}: try_extend's first test adds one
// iteration to X. fold() then tries again, and every fold it could make
// compares X, now with count + 1, to an item of the 2 * window groups before
// (seq_shifted asks equal counts of loop items): so until X's count reaches
// the count of a loop item there, nothing else folds.
uint64_t SeqBuilder::loop_room(int64_t first, int64_t stride, uint64_t n) const {
  if (tops_.empty()) return 0;
  const uint32_t x = tops_.back();
  if (items_.size() != size_t(x) + 2) return 0;
  const SeqItem& loop = items_[x];
  if (!loop.is_loop() || loop.span != 1 || items_[x + 1].is_loop() || loop.v != stride) return 0;
  if (wadd(items_[x + 1].v, wmul(int64_t(loop.count), stride)) != first) return 0;
  uint64_t limit = std::numeric_limits<uint32_t>::max() - 1;  // try_extend leaves a full loop alone
  const size_t nt = tops_.size(), groups = 2 * size_t(window_);
  for (size_t i = nt > groups ? tops_[nt - groups] : 0; i < x; ++i)
    if (items_[i].is_loop() && items_[i].count > loop.count) limit = std::min<uint64_t>(limit, items_[i].count - 1);
  return limit > loop.count ? std::min<uint64_t>(n, limit - loop.count) : 0;
}

void SeqBuilder::clear_keep_capacity() {
  length_ = 0;
  items_.clear();
  tops_.clear();
  scalar_tail_ = 0;
}

}  // namespace mpior::trace
