#include "postproc/aggregators.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "merge/merge.hpp"
#include "postproc/restream.hpp"
#include "trace/arg_views.hpp"
#include "trace/cursor.hpp"
#include "trace/tool_error.hpp"

namespace mpior::postproc {

namespace {

using trace::Event;
using trace::OpClass;

// A collective read or write that moves data (a split collective's _end
// only completes its _begin).
bool is_collective_transfer(const Event& ev) {
  if (ev.depth != 0 || !trace::is_mpiio(ev.kind)) return false;
  if (ev.op() != OpClass::mpiio_write && ev.op() != OpClass::mpiio_read) return false;
  int64_t flags = mpiio_args(ev).flags();
  return (flags & trace::fio::kColl) && !(flags & trace::fio::kEnd);
}

bool is_nested_transfer(const Event& ev) {
  return ev.depth > 0 && trace::info(ev.kind).family == trace::Family::posix &&
         (ev.op() == OpClass::read || ev.op() == OpClass::write);
}

// One collective call: the k-th collective transfer on a global file by one
// thread of each rank.
using CallKey = std::tuple<int32_t, uint32_t, int64_t>;  // global file, thread, ordinal
struct Call {
  bool read = false;
  std::vector<ByteRange> moved;                      // nested transfers' extents (of the call's direction)
  int64_t ns = 0, bytes = 0;                         // the time they took, the bytes they moved
  std::vector<int32_t> ranks;                        // who made it
  std::map<int32_t, std::vector<ByteRange>> pieces;  // rank -> [offset, end) it moves now
};
using FdKey = std::tuple<int32_t, uint32_t, int32_t>;  // rank, thread, global file

// A rank's walk through its collective transfers, shared by both passes.
struct Walk {
  const trace::Plan& plan;
  int32_t rank;
  uint32_t thread;
  std::map<int32_t, int64_t> seen;  // global file -> collective transfers so far
  int32_t global(int64_t local) const {
    const auto& files = plan.ranks[size_t(rank)].files;
    return local >= 0 && size_t(local) < files.size() ? files[size_t(local)] : -1;
  }
  CallKey key(const Event& ev) {
    int32_t g = global(mpiio_args(ev).file());
    return {g, thread, seen[g]++};
  }
};

struct Collected {
  std::map<CallKey, Call> calls;
  std::map<FdKey, int64_t> fds;
  uint64_t callsite = 0;  // of a traced nested transfer, for the ones made
  // Ranks (and threads) whose streams change: a nested transfer goes, or a
  // request is dealt to them.
  std::set<std::pair<int32_t, uint32_t>> changed;
};

void collect_nested(const Event& ev, int32_t rank, Walk& w, Call* in, bool in_open, Collected& out) {
  bool opened = in_open && ev.op() == OpClass::open && ev.ret >= 0;
  if (opened) out.fds[{rank, w.thread, w.global(io_args(ev).file())}] = ev.ret;
  if (!in || !is_nested_transfer(ev)) return;
  out.changed.insert({rank, w.thread});
  auto a = io_args(ev);
  out.fds.try_emplace({rank, w.thread, w.global(a.file())}, a.handle());
  bool same_way = (ev.op() == OpClass::read) == in->read;
  if (!same_way || a.offset() < 0 || ev.ret <= 0) return;
  in->moved.emplace_back(a.offset(), a.offset() + ev.ret);
  in->ns += ev.dur_ns;
  in->bytes += ev.ret;
  if (out.callsite == 0) out.callsite = ev.callsite;
}

Collected collect(const trace::Plan& plan) {
  Collected out;
  for (const trace::Stream& s : plan.streams)
    for (int64_t r : s.rank_list()) {
      Walk w{plan, int32_t(r), s.thread, {}};
      trace::EventCursor c(s, int32_t(r), Restream::cursor_options());
      Event ev;
      Call* in = nullptr;
      bool in_open = false;
      while (c.next(ev)) {
        if (ev.depth > 0) {
          collect_nested(ev, int32_t(r), w, in, in_open, out);
          continue;
        }
        in = is_collective_transfer(ev) ? &out.calls[w.key(ev)] : nullptr;
        if (in) in->ranks.push_back(int32_t(r)), in->read = ev.op() == OpClass::mpiio_read;
        in_open = trace::is_mpiio(ev.kind) && ev.op() == OpClass::mpiio_open;
      }
    }
  return out;
}

// The extents merged, ascending.
std::vector<ByteRange> union_of(std::vector<ByteRange> v) {
  std::sort(v.begin(), v.end());
  std::vector<ByteRange> out;
  for (const ByteRange& e : v)
    if (!out.empty() && e.first <= out.back().second)
      out.back().second = std::max(out.back().second, e.second);
    else
      out.push_back(e);
  return out;
}

// One aggregator's requests over its domain: per cb window from the first
// byte moved in the domain, the bytes moved (writes) or the window's span
// from its first to its last byte moved (reads).
void deal_domain(const std::vector<ByteRange>& runs, ByteRange dom, int64_t cb, bool read,
                 std::vector<ByteRange>& out) {
  auto first = std::lower_bound(runs.begin(), runs.end(), dom,
                                [](const ByteRange& e, const ByteRange& d) { return e.second <= d.first; });
  if (first == runs.end() || first->first >= dom.second) return;
  for (int64_t w = std::max(first->first, dom.first); w < dom.second; w += cb) {
    if (first == runs.end() || first->first >= dom.second) break;
    if (first->first >= w + cb) w += (first->first - w) / cb * cb;  // windows nothing falls in
    int64_t wend = std::min(w + cb, dom.second), lo = wend, hi = w;
    for (auto e = first; e != runs.end() && e->first < wend; ++e) {
      int64_t from = std::max(e->first, w), to = std::min(e->second, wend);
      if (from >= to) continue;
      if (!read) out.emplace_back(from, to);
      lo = std::min(lo, from), hi = std::max(hi, to);
    }
    if (read && lo < hi) out.emplace_back(lo, hi);
    while (first != runs.end() && first->second <= wend) ++first;
  }
}

// The aggregators of calls made by the same ranks, found once.
using AggregatorCache = std::map<std::vector<int32_t>, std::vector<int32_t>>;

void deal(const trace::Plan& plan, Call& call, const CollectiveHints& h, AggregatorCache& cache) {
  std::vector<ByteRange> runs = union_of(std::move(call.moved));
  if (runs.empty()) return;
  std::sort(call.ranks.begin(), call.ranks.end());
  auto [at, fresh] = cache.try_emplace(call.ranks);
  if (fresh) {
    std::vector<std::string> hosts;
    hosts.reserve(call.ranks.size());
    for (int32_t r : call.ranks) hosts.push_back(plan.ranks[size_t(r)].host);
    at->second = aggregator_ranks(call.ranks, hosts, h);
  }
  const std::vector<int32_t>& aggs = at->second;
  std::vector<ByteRange> doms = file_domains(runs.front().first, runs.back().second, int(aggs.size()), h.striping_unit);
  for (size_t j = 0; j < aggs.size(); ++j) {
    std::vector<ByteRange> mine;
    deal_domain(runs, doms[j], h.cb_buffer_size, call.read, mine);
    if (!mine.empty()) call.pieces[aggs[j]] = std::move(mine);
  }
}

// The requests dealt to a rank for one call, spread over its end: they take
// the traced transfers' time per byte (the data exchange is the rest of the
// call's time).
void insert_pieces(Restream& b, const Event& ev, const Call& call, const std::vector<ByteRange>& mine, int64_t fd,
                   uint64_t callsite, uint64_t& made) {
  std::vector<int64_t> dur;
  int64_t total = 0;
  for (const ByteRange& p : mine) {
    double share = call.bytes > 0 ? double(p.second - p.first) / double(call.bytes) : 0;
    total += dur.emplace_back(int64_t(double(call.ns) * share));
  }
  int64_t at = std::max(ev.start_ns, ev.end_ns - total);
  for (size_t i = 0; i < dur.size(); ++i) {
    trace::RawEvent piece;
    piece.kind = call.read ? trace::Kind::pread : trace::Kind::pwrite;  // what ROMIO calls
    piece.depth = 1;
    piece.callsite = callsite;
    piece.start = at;
    piece.end = at = std::min(ev.end_ns, at + dur[i]);
    auto a = io_args(piece);
    a.handle() = fd;
    a.file() = mpiio_args(ev).file();
    a.offset() = mine[i].first;
    a.count() = piece.ret = mine[i].second - mine[i].first;
    b.insert(piece);
    ++made;
  }
}

// The rank's stream again, its collective calls' nested transfers replaced
// by the requests dealt to it.
trace::Stream rebuild(const trace::Plan& plan, const trace::Stream& s, int32_t rank, Collected& got, uint64_t& made) {
  Walk w{plan, rank, s.thread, {}};
  Restream b(s.lossless);
  b.begin(s, rank);
  trace::EventCursor c(s, rank, Restream::cursor_options());
  Event ev;
  bool in = false;
  while (c.next(ev)) {
    if (in && ev.depth > 0 && is_nested_transfer(ev)) continue;
    b.copy(ev.raw());
    if (ev.depth > 0) continue;
    in = is_collective_transfer(ev);
    if (!in) continue;
    CallKey key = w.key(ev);
    const Call& call = got.calls[key];
    auto mine = call.pieces.find(rank);
    if (mine == call.pieces.end()) continue;
    auto fd = got.fds.find({rank, s.thread, std::get<0>(key)});
    if (fd == got.fds.end())
      throw ToolError(fmt::format("rank {} cannot move data for the others: it never opened {} at the POSIX level",
                                  rank, plan.files[size_t(std::get<0>(key))].path));
    insert_pieces(b, ev, call, mine->second, fd->second, got.callsite, made);
  }
  return b.finish(rank, s.thread);
}

trace::SeqRef add_ranks(trace::Stream& s, const std::vector<int64_t>& ranks) {
  trace::SeqBuilder b;
  for (int64_t r : ranks) b.append(r);
  return s.values.add(b.items());
}

// The stream for some of its ranks (ascending), each reading back what it
// read: the rank variants keep only those ranks, and go when none is left.
trace::Stream keep_ranks(const trace::Stream& s, const std::vector<int64_t>& ranks) {
  trace::Stream out = s;
  out.ranks = add_ranks(out, ranks);
  for (std::vector<trace::RankVariant>& variants : out.ranked) {
    std::vector<trace::RankVariant> left;
    for (trace::RankVariant v : variants) {
      std::vector<int64_t> mine;
      for (int64_t r : seq_expand(s.view(v.ranks)))
        if (std::binary_search(ranks.begin(), ranks.end(), r)) mine.push_back(r);
      if (mine.empty()) continue;
      v.ranks = add_ranks(out, mine);
      left.push_back(v);
    }
    variants = std::move(left);
  }
  return out;
}

// Every stream's ranks that change, rebuilt one by one and merged again;
// the others keep their stream, for the ranks left in it (with thousands
// of ranks and a few aggregators, most of them).
std::vector<trace::Stream> restreamed(const trace::Plan& plan, Collected& got, uint64_t& made) {
  std::vector<trace::Stream> kept;
  std::vector<std::pair<std::pair<int32_t, uint32_t>, trace::Stream>> per_rank;
  for (const trace::Stream& s : plan.streams) {
    std::vector<int64_t> same;
    for (int64_t r : s.rank_list())
      if (got.changed.contains({int32_t(r), s.thread}))
        per_rank.push_back({{int32_t(r), s.thread}, rebuild(plan, s, int32_t(r), got, made)});
      else
        same.push_back(r);
    if (!same.empty()) kept.push_back(same.size() == size_t(seq_length(s.view(s.ranks))) ? s : keep_ranks(s, same));
  }
  std::stable_sort(per_rank.begin(), per_rank.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<trace::Stream> streams;
  for (auto& [who, s] : per_rank) streams.push_back(std::move(s));
  streams = merge::merge_streams(std::move(streams));
  for (trace::Stream& s : kept) streams.push_back(std::move(s));
  auto first = [](const trace::Stream& s) { return std::pair(seq_min(s.view(s.ranks)), s.thread); };
  std::stable_sort(streams.begin(), streams.end(),
                   [&](const trace::Stream& a, const trace::Stream& b) { return first(a) < first(b); });
  return streams;
}

}  // namespace

Redealt redeal_collective_io(trace::Plan& plan, const CollectiveHints& hints) {
  check_hints(hints);
  Collected got = collect(plan);
  Redealt out;
  AggregatorCache cache;
  for (auto& [key, call] : got.calls) {
    if (call.moved.empty()) continue;
    deal(plan, call, hints, cache);
    ++out.calls;
    out.aggregators = std::max(out.aggregators, int32_t(call.pieces.size()));
    for (const auto& [rank, pieces] : call.pieces) got.changed.insert({rank, std::get<1>(key)});
  }
  if (out.calls == 0) return out;
  plan.streams = restreamed(plan, got, out.transfers);
  // The streams are numbered anew: the notes before this one name the
  // streams and positions as extrapolated.
  plan.extrap.notes.push_back(
      {-1, -1, -1, "aggregators",
       fmt::format("the POSIX transfers of {} collective calls dealt to {} aggregators (cb_config_list {}, "
                   "striping_unit {}) in requests of at most {} bytes, {} transfers (notes above: streams before)",
                   out.calls, hints.cb_nodes, hints.cb_config_list, hints.striping_unit, hints.cb_buffer_size,
                   out.transfers),
       "cb_nodes"});
  return out;
}

}  // namespace mpior::postproc
