#include "extrap/dealt.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "extrap/incidental.hpp"
#include "trace/text.hpp"
#include "trace/tool_error.hpp"

namespace mpior::extrap {

namespace {

using Tuple = std::vector<int64_t>;  // the used fields of one occurrence

// Names a rank's own tables give (files, communicators, requests): not
// quantities of the entries, and fitted position by position as ever.
bool used_field(trace::Kind k, int f) {
  if (f == kRetField) return !trace::returns_handle(k);
  if (f == kErrField) return true;
  if (trace::is_handle_slot(k, f)) return false;
  for (const char* name : {"file", "file2", "comm", "newcomm", "req"})
    if (std::strcmp(trace::arg_name(k, f), name) == 0) return false;
  return true;
}

const trace::Param& field_param(const trace::Leaf& l, int f) {
  return f == kRetField ? l.ret : f == kErrField ? l.err : l.args[size_t(f)];
}

// Rank r's values of one field over k occurrences (a scalar stands for
// every occurrence, an empty sequence for zeros); nullopt when neither.
std::optional<std::vector<int64_t>> occurrences(const trace::Stream& s, const trace::Param& p, int64_t r, size_t k) {
  auto [items, offset] = rank_view(s, p, r);
  std::vector<int64_t> v = trace::seq_expand(items);
  for (int64_t& x : v) x += offset;
  if (v.empty()) return std::vector<int64_t>(k, 0);
  if (v.size() == 1) return std::vector<int64_t>(k, v.front());
  if (v.size() == k) return v;
  return std::nullopt;
}

// Every rank's occurrences at one site of one input, in its order; ranks
// without the site have none.
struct Observed {
  int64_t n = 0;
  std::vector<std::vector<Tuple>> per_rank;
};

class Builder {
 public:
  Builder(const std::vector<Input>& inputs, const SiteKey& key) : inputs_(inputs), key_(key) {}

  // The first occurrences of every rank may be its own (IOR's data writes
  // share HDF5's call site with the metadata after them): the smallest such
  // prefix after which the rest is dealt.
  std::unique_ptr<DealtTable> build(std::string& why) {
    for (int f = 0; f < kNumFields; ++f) table_.used_[size_t(f)] = used_field(key_.kind, f);
    std::vector<Observed> seen(inputs_.size());
    size_t most = SIZE_MAX;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (!observe(inputs_[i], seen[i], why)) return nullptr;
      for (const auto& rank : seen[i].per_rank) most = std::min(most, rank.size());
    }
    std::string first_why;
    for (size_t prefix = 0; prefix <= most; ++prefix) {
      if (try_prefix(seen, prefix, why)) {
        table_.prefix_ = int64_t(prefix);
        return std::make_unique<DealtTable>(std::move(table_));
      }
      if (!prefix) first_why = why;
    }
    why = first_why;
    return nullptr;
  }

 private:
  bool try_prefix(std::vector<Observed> seen, size_t prefix, std::string& why) {
    std::vector<std::vector<std::vector<size_t>>> orders;  // per input, per rank: entry indices in order
    std::vector<std::vector<Tuple>> tables;                // per input: the entries by address
    table_.entries_ = 0;
    for (Observed& obs : seen) {
      for (auto& rank : obs.per_rank) rank.erase(rank.begin(), rank.begin() + ptrdiff_t(prefix));
      tables.emplace_back();
      orders.emplace_back();
      if (!deal(obs, tables.back(), orders.back(), why)) return false;
    }
    return levels(orders, why) && fit(tables, why);
  }

  bool observe(const Input& in, Observed& obs, std::string& why) {
    obs.n = in.n;
    obs.per_rank.assign(size_t(in.n), {});
    for (const trace::Stream& s : in.plan.streams) {
      if (s.thread != key_.thread) continue;
      size_t leaf = s.leaves.size();
      for (size_t l = 0; l < s.leaves.size() && leaf == s.leaves.size(); ++l)
        if (site_of(s, l) == key_) leaf = l;
      if (leaf == s.leaves.size()) continue;
      int32_t loop = enclosing_loops(s)[leaf];
      if (loop == -2) {
        why = "the position lies in nested loops";
        return false;
      }
      for (int64_t r : s.rank_list()) {
        size_t k = 1;
        if (loop >= 0) {
          auto it = occurrences(s, s.nodes[size_t(loop)].iters, r, 1);
          if (!it || it->front() < 0) {
            why = "its loop's trip count varies";
            return false;
          }
          k = size_t(it->front());
        }
        std::vector<Tuple>& out = obs.per_rank[size_t(r)];
        out.assign(k, Tuple());
        for (int f = 0; f < kNumFields; ++f) {
          if (!table_.used_[size_t(f)]) continue;
          auto v = occurrences(s, field_param(s.leaves[leaf], f), r, k);
          if (!v) {
            why = "its values are not one per occurrence";
            return false;
          }
          for (size_t i = 0; i < k; ++i) out[i].push_back((*v)[i]);
        }
      }
    }
    return true;
  }

  // The entries by address, and each rank's as indices; checks the block deal.
  bool deal(const Observed& obs, std::vector<Tuple>& table, std::vector<std::vector<size_t>>& order, std::string& why) {
    for (const auto& rank : obs.per_rank) table.insert(table.end(), rank.begin(), rank.end());
    std::sort(table.begin(), table.end());
    if (std::adjacent_find(table.begin(), table.end()) != table.end()) {
      why = fmt::format("at {} ranks two occurrences have the same values (a table is dealt once)", obs.n);
      return false;
    }
    int64_t e = int64_t(table.size());
    if (e < 2 || (table_.entries_ && e != table_.entries_)) {
      why = fmt::format("{} entries at {} ranks, {} at the first input: the total is not fixed", e, obs.n,
                        table_.entries_);
      return false;
    }
    table_.entries_ = e;
    size_t first = 0;
    for (int64_t r = 0; r < obs.n; ++r) {
      const auto& mine = obs.per_rank[size_t(r)];
      if (int64_t(mine.size()) != share_of(e, r, obs.n)) {
        why = fmt::format("at {} ranks rank {} has {} of the {} entries, not floor(E/n) or one more in rank order",
                          obs.n, r, mine.size(), e);
        return false;
      }
      order.emplace_back();
      for (const Tuple& t : mine) {
        size_t at = size_t(std::lower_bound(table.begin(), table.end(), t) - table.begin());
        if (at < first || at >= first + mine.size()) {
          why = fmt::format("at {} ranks rank {} writes entry {} outside its block {}..{}", obs.n, r, at, first,
                            first + mine.size() - 1);
          return false;
        }
        order.back().push_back(at);
      }
      first += mine.size();
    }
    return true;
  }

  // Write order: each rank writes its block ring by ring, by address within a
  // ring (HDF5 flushes the cache ring by ring). Entry b written right after a
  // is in a's ring or a later one, a later one when its address is lower. The
  // rings are the fewest that every observed order allows.
  bool levels(const std::vector<std::vector<std::vector<size_t>>>& orders, std::string& why) {
    struct After {
      size_t a, b;
      int32_t gap;  // b's ring is at least a's plus this
    };
    std::vector<After> after;
    for (const auto& input : orders)
      for (const auto& rank : input)
        for (size_t i = 1; i < rank.size(); ++i) after.push_back({rank[i - 1], rank[i], rank[i - 1] > rank[i] ? 1 : 0});
    std::vector<int32_t>& level = table_.level_;
    level.assign(size_t(table_.entries_), 0);
    for (int64_t pass = 0; pass <= table_.entries_; ++pass) {
      bool moved = false;
      for (auto [a, b, gap] : after)
        if (level[b] < level[a] + gap) {
          level[b] = level[a] + gap;
          moved = true;
        }
      if (!moved) break;
      if (pass == table_.entries_) {
        why = "the ranks write their entries in contradicting orders";
        return false;
      }
    }
    for (size_t i = 0; i < orders.size(); ++i)
      for (size_t r = 0; r < orders[i].size(); ++r) {
        std::vector<size_t> want = orders[i][r];
        std::vector<size_t> sorted = want;
        std::sort(sorted.begin(), sorted.end(),
                  [&](size_t a, size_t b) { return std::pair(level[a], a) < std::pair(level[b], b); });
        if (sorted != want) {
          why = fmt::format("at {} ranks rank {} writes its entries in an order no ring order gives", inputs_[i].n, r);
          return false;
        }
      }
    return true;
  }

  bool fit(const std::vector<std::vector<Tuple>>& tables, std::string& why) {
    table_.fits_.assign(size_t(table_.entries_), std::vector<Fit>(kNumFields));
    for (size_t e = 0; e < size_t(table_.entries_); ++e) {
      size_t at = 0;
      for (int f = 0; f < kNumFields; ++f) {
        if (!table_.used_[size_t(f)]) continue;
        std::vector<Sample> pts;
        for (size_t i = 0; i < tables.size(); ++i) pts.push_back({0, inputs_[i].n, tables[i][e][at]});
        std::optional<Fit> fit = fit_exact(pts);
        if (!fit) {
          std::string seen;
          for (const Sample& p : pts) seen += fmt::format(" n={}: {}", p.n, p.y);
          why = fmt::format("entry {}'s {} fits no model of n:{}", e, trace::arg_name(key_.kind, f), seen);
          return false;
        }
        table_.fits_[e][size_t(f)] = std::move(*fit);
        ++at;
      }
    }
    return true;
  }

  const std::vector<Input>& inputs_;
  SiteKey key_;
  DealtTable table_;
};

}  // namespace

std::vector<int32_t> enclosing_loops(const trace::Stream& s) {
  std::vector<int32_t> out(s.leaves.size(), -1);
  std::vector<std::pair<uint32_t, uint32_t>> open;  // loop node, end of its body
  for (uint32_t i = 0; i < s.nodes.size(); ++i) {
    while (!open.empty() && i >= open.back().second) open.pop_back();
    const trace::Node& node = s.nodes[i];
    if (node.loop) {
      open.emplace_back(i, i + 1 + node.index);
    } else if (node.index < out.size()) {
      out[node.index] = open.empty() ? -1 : open.size() == 1 ? int32_t(open.front().first) : -2;
    }
  }
  return out;
}

SiteKey site_of(const trace::Stream& s, size_t leaf) {
  const trace::Leaf& l = s.leaves[leaf];
  SiteKey k{s.thread, l.kind, l.callsite, l.depth, 0};
  for (size_t i = 0; i < leaf; ++i) {
    const trace::Leaf& o = s.leaves[i];
    if (o.kind == l.kind && o.callsite == l.callsite && o.depth == l.depth) ++k.ordinal;
  }
  return k;
}

std::vector<size_t> DealtTable::order(int64_t r, int64_t n) const {
  int64_t first = r * (entries_ / n) + std::min(r, entries_ % n);
  std::vector<size_t> out;
  for (int64_t e = first; e < first + share_of(entries_, r, n); ++e) out.push_back(size_t(e));
  std::sort(out.begin(), out.end(),
            [&](size_t a, size_t b) { return std::pair(level_[a], a) < std::pair(level_[b], b); });
  return out;
}

std::vector<int64_t> DealtTable::values(int f, int64_t r, int64_t n) const {
  std::vector<int64_t> out;
  for (size_t e : order(r, n)) {
    const Fit& fit = fits_[e][size_t(f)];
    std::optional<int64_t> v = fit.eval_int(0, n);
    if (!v)
      throw ToolError(fmt::format("entry {} of the dealt table: at {} ranks its model {} = {} gives no integer", e, n,
                                  fit.name, fit.formula()));
    out.push_back(*v);
  }
  return out;
}

std::string DealtTable::text() const {
  int32_t rings = level_.empty() ? 0 : *std::max_element(level_.begin(), level_.end()) + 1;
  return fmt::format("{} entries by address dealt in blocks (rank r: share({},r,n)), written in {} ring{}", entries_,
                     entries_, rings, rings == 1 ? "" : "s");
}

const DealtTable* DealtTables::find(const trace::Stream& shape, size_t leaf, std::string* why) {
  SiteKey key = site_of(shape, leaf);
  auto it = sites_.find(key);
  if (it == sites_.end()) {
    Site site;
    site.table = Builder(inputs_, key).build(site.why);
    it = sites_.emplace(key, std::move(site)).first;
  }
  if (why) *why = it->second.why;
  return it->second.table.get();
}

}  // namespace mpior::extrap
