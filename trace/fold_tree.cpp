#include "trace/fold_tree.hpp"

#include <algorithm>

namespace mpior::trace::fold {
namespace {

uint64_t loop_signature(std::span<const BodyEntry> body, const UnitTree& tree) {
  uint64_t h = mix(0x4C4F4F5000000000ull ^ body.size());
  for (const BodyEntry& e : body) h = mix(h ^ tree.sig(e.ref)) + 0x9E3779B97F4A7C15ull;
  return h;
}

}  // namespace

void LeafUnit::sync() {
  if (!row) return;
  if (row->extra)
    for (int i = 0; i < kRowSize; ++i) values[size_t(i)].extend_run(row->extra_of(i));
  row->extra = 0;
  row->room = 0;
}

void LeafUnit::append_direct(const ValueRow& v) {
  for (uint32_t d = row->direct; d != 0; d &= d - 1) {
    const auto i = size_t(std::countr_zero(d));
    values[i].append(v[i]);
  }
}

void LeafUnit::add_row_slow(const ValueRow& v) {
  sync();
  for (int i = 0; i < kRowSize; ++i) values[size_t(i)].append(v[size_t(i)]);
  start_fast_row();
}

// Columns on a run are compared (a constant, or a stride seen three times);
// the others go straight to their folders.
void LeafUnit::start_fast_row() {
  uint32_t room = UINT32_MAX;
  uint16_t direct = 0;
  for (int i = 0; i < kRowSize; ++i) {
    const ValueFolder& f = values[size_t(i)];
    if (f.on_run())
      room = std::min(room, f.run_room());
    else
      direct = uint16_t(direct | 1u << i);
  }
  // No column on a run (a position seen once, most of an irregular trace's):
  // no row, nothing to allocate.
  if (room == 0 || direct == (1u << kRowSize) - 1) return;
  FastRow& r = row.make();
  for (size_t i = 0; i < values.size(); ++i) {
    const bool compared = !((direct >> i) & 1);
    r.expect[i] = compared ? values[i].next_value() : 0;
    r.step[i] = compared ? values[i].stride() : 0;
    r.care[i] = compared ? -1 : 0;
  }
  r.direct = direct;
  r.moving = 0;
  for (int p = 0; p < kRowSize / 2; ++p)
    if (r.step[size_t(2 * p)] != 0 || r.step[size_t(2 * p + 1)] != 0) r.moving = uint8_t(r.moving | 1u << p);
  r.extra = 0;
  r.room = room;
}

UnitRef UnitTree::new_leaf(const Sample& s) {
  uint32_t i;
  if (!free_leaves_.empty()) {
    i = free_leaves_.back();
    free_leaves_.pop_back();
  } else {
    i = leaves_.grow();
    if (lossless_) exact_.grow();
  }
  LeafUnit& u = leaves_[i];
  u.sig = s.sig;
  u.kind = s.ev.kind;
  u.depth = s.ev.depth;
  u.flags = s.ev.flags;
  u.callsite = s.ev.callsite;
  add(i, s);
  return i;
}

UnitRef UnitTree::new_loop(std::span<const UnitRef> body) {
  uint32_t i;
  if (!free_loops_.empty()) {
    i = free_loops_.back();
    free_loops_.pop_back();
  } else {
    i = loops_.grow();
  }
  LoopUnit& u = loops_[i];
  u.body.clear();
  for (UnitRef r : body) u.body.push_back({first_sig(r), r});
  u.sig = loop_signature(u.body, *this);
  u.first_sig = u.body.front().match_sig;
  u.open = 0;
  return i | kLoopBit;
}

UnitRef UnitTree::copy_of(const UnitTree& src, UnitRef r) {
  if (!is_loop(r)) {
    uint32_t i = leaves_.grow();
    leaves_[i] = src.leaf(r);
    if (lossless_) exact_[exact_.grow()] = src.exact_[index_of(r)];
    return i;
  }
  const LoopUnit& from = src.loop(r);
  uint32_t i = loops_.grow();
  for (const BodyEntry& e : from.body) {
    UnitRef child = copy_of(src, e.ref);
    loops_[i].body.push_back({e.match_sig, child});
  }
  LoopUnit& to = loops_[i];
  to.sig = from.sig;
  to.first_sig = from.first_sig;
  to.iters = from.iters;
  to.open = from.open;
  return i | kLoopBit;
}

void UnitTree::release(UnitRef r) {
  scratch_.clear();
  scratch_.push_back(r);
  while (!scratch_.empty()) {
    UnitRef u = scratch_.back();
    scratch_.pop_back();
    if (!is_loop(u)) {
      LeafUnit& l = leaf(u);
      for (ValueFolder& f : l.values) f.clear();
      l.row.reset();
      l.gap.clear();
      l.dur.clear();
      if (lossless_) {
        exact_[index_of(u)].gap.clear();
        exact_[index_of(u)].dur.clear();
      }
      free_leaves_.push_back(index_of(u));
      continue;
    }
    LoopUnit& l = loop(u);
    for (const BodyEntry& e : l.body) scratch_.push_back(e.ref);
    l.body.clear();
    l.iters.clear();
    l.open = 0;
    free_loops_.push_back(index_of(u));
  }
}

bool UnitTree::same_shape(UnitRef a, UnitRef b) const {
  if (is_loop(a) != is_loop(b)) return false;
  if (!is_loop(a)) {
    const LeafUnit &x = leaf(a), &y = leaf(b);
    return x.kind == y.kind && x.depth == y.depth && x.flags == y.flags && x.callsite == y.callsite;
  }
  const LoopUnit &x = loop(a), &y = loop(b);
  if (x.sig != y.sig || x.body.size() != y.body.size()) return false;
  for (size_t i = 0; i < x.body.size(); ++i)
    if (!same_shape(x.body[i].ref, y.body[i].ref)) return false;
  return true;
}

void UnitTree::close(UnitRef r) {
  LoopUnit& l = loop(r);
  if (l.open == 0) return;
  l.iters.append(int64_t(l.open));
  l.open = 0;
}

void UnitTree::merge_leaf(uint32_t dst_index, uint32_t src_index) {
  LeafUnit& dst = leaves_[dst_index];
  LeafUnit& src = leaves_[src_index];
  dst.sync();
  src.sync();
  for (size_t i = 0; i < dst.values.size(); ++i) dst.values[i].append_all(src.values[i]);
  dst.gap.merge(src.gap);
  dst.dur.merge(src.dur);
  if (lossless_) {
    exact_[dst_index].gap.append_all(exact_[src_index].gap);
    exact_[dst_index].dur.append_all(exact_[src_index].dur);
  }
}

void UnitTree::merge(UnitRef dst, UnitRef src) {
  // Walk both trees in step; src is released once, at the end.
  auto& work = merge_work_;
  work.clear();
  work.push_back({dst, src});
  while (!work.empty()) {
    MergePair p = work.back();
    work.pop_back();
    if (!is_loop(p.dst)) {
      merge_leaf(index_of(p.dst), index_of(p.src));
      continue;
    }
    LoopUnit& d = loop(p.dst);
    const LoopUnit& s = loop(p.src);
    d.iters.append_all(s.iters);
    if (s.open) d.iters.append(int64_t(s.open));
    for (size_t i = 0; i < d.body.size(); ++i) work.push_back({d.body[i].ref, s.body[i].ref});
  }
  release(src);
}

Leaf UnitTree::make_leaf(uint32_t index, Stream& out) const {
  const LeafUnit& u = leaves_[index];
  Leaf l;
  l.kind = u.kind;
  l.depth = u.depth;
  l.flags = u.flags;
  l.callsite = u.callsite;
  // The folders may not know of the row's last occurrences yet.
  auto emit = [&](int i) { return u.values[size_t(i)].emit(out.values, u.row.extra_of(i)); };
  for (int i = 0; i < kNumArgs; ++i) l.args[size_t(i)].seq = emit(i);
  l.ret.seq = emit(kRet);
  l.err.seq = emit(kErr);
  l.gap = u.gap.stats();
  l.dur = u.dur.stats();
  if (lossless_) {
    l.exact_gap.seq = exact_[index].gap.emit(out.values);
    l.exact_dur.seq = exact_[index].dur.emit(out.values);
  }
  return l;
}

void UnitTree::emit(UnitRef r, Stream& out) const {
  if (!is_loop(r)) {
    out.nodes.push_back({false, uint32_t(out.leaves.size()), {}});
    out.leaves.push_back(make_leaf(index_of(r), out));
    return;
  }
  const LoopUnit& l = loop(r);
  size_t at = out.nodes.size();
  Node n{true, 0, {}};
  n.iters.seq = l.open ? l.iters.emit_with(out.values, int64_t(l.open)) : l.iters.emit(out.values);
  out.nodes.push_back(n);
  for (const BodyEntry& e : l.body) emit(e.ref, out);
  out.nodes[at].index = uint32_t(out.nodes.size() - at - 1);
}

size_t UnitTree::memory_bytes() const {
  size_t n = leaves_.capacity() * sizeof(LeafUnit) + exact_.capacity() * sizeof(ExactTimes) +
             loops_.capacity() * sizeof(LoopUnit) +
             (free_leaves_.capacity() + free_loops_.capacity() + scratch_.capacity()) * sizeof(uint32_t) +
             merge_work_.capacity() * sizeof(MergePair) + leaves_.overhead_bytes() + exact_.overhead_bytes() +
             loops_.overhead_bytes();
  for (uint32_t i = 0; i < leaves_.size(); ++i) {
    const LeafUnit& l = leaves_[i];
    for (const ValueFolder& f : l.values) n += f.heap_bytes();
    n += l.row.heap_bytes() + l.gap.heap_bytes() + l.dur.heap_bytes();
    if (lossless_) n += exact_[i].gap.heap_bytes() + exact_[i].dur.heap_bytes();
  }
  for (uint32_t i = 0; i < loops_.size(); ++i) {
    n += loops_[i].body.capacity() * sizeof(BodyEntry) + loops_[i].iters.heap_bytes();
  }
  return n;
}

Leaf leaf_of_sample(const Sample& s, bool lossless, SeqArena& values) {
  Leaf l;
  l.kind = s.ev.kind;
  l.depth = s.ev.depth;
  l.flags = s.ev.flags;
  l.callsite = s.ev.callsite;
  for (int i = 0; i < kNumArgs; ++i) l.args[size_t(i)].seq = values.add_scalar(s.ev.args[size_t(i)]);
  l.ret.seq = values.add_scalar(s.ev.ret);
  l.err.seq = values.add_scalar(s.ev.err);
  l.gap.add(s.gap);
  l.dur.add(s.dur);
  if (lossless) {
    l.exact_gap.seq = values.add_scalar(s.gap);
    l.exact_dur.seq = values.add_scalar(s.dur);
  }
  return l;
}

}  // namespace mpior::trace::fold
