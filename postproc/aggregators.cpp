#include "postproc/aggregators.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "merge/merge.hpp"
#include "postproc/mpiio_request.hpp"
#include "postproc/restream.hpp"
#include "postproc/romio_lustre.hpp"
#include "postproc/transfer_events.hpp"
#include "trace/arg_views.hpp"
#include "trace/cursor.hpp"
#include "trace/tool_error.hpp"
#include "trace/transfer.hpp"

namespace mpior::postproc {

namespace {

using trace::Event;
using trace::OpClass;

// An independent read or write at an explicit or individual offset (ROMIO
// moves it alone; a non-contiguous view makes it strided).
bool is_own_transfer(const Event& ev) {
  if (ev.depth != 0 || !trace::is_mpiio(ev.kind)) return false;
  if (ev.op() != OpClass::mpiio_write && ev.op() != OpClass::mpiio_read) return false;
  return !(mpiio_args(ev).flags() & (trace::fio::kColl | trace::fio::kEnd | trace::fio::kOrdered));
}

bool is_nested_transfer(const Event& ev) {
  return ev.depth > 0 && trace::info(ev.kind).family == trace::Family::posix &&
         (ev.op() == OpClass::read || ev.op() == OpClass::write);
}

// One collective call: the k-th collective transfer on a global file by one
// thread of each rank.
using CallKey = std::tuple<int32_t, uint32_t, int64_t>;  // global file, thread, ordinal
// One independent call: the k-th on one thread of one rank.
using OwnKey = std::tuple<int32_t, uint32_t, int64_t>;  // rank, thread, ordinal

// A transfer dealt to a rank (a read-modify-write's read finds what earlier
// calls wrote).
using Piece = PosixTransfer;

struct Call {
  bool read = false;
  int32_t file = -1;                             // global file (independent calls)
  bool asked_known = true;                       // every rank's offset recorded
  std::map<int32_t, Asked> asked;                // rank -> its request
  std::vector<ByteRange> moved;                  // nested transfers' extents (of the call's direction)
  int64_t ns = 0, bytes = 0;                     // the time they took, the bytes they moved
  int64_t rmw_ns = 0, rmw_bytes = 0;             // a write's reads of its holes, as traced
  std::vector<int32_t> ranks;                    // who made it
  std::map<int32_t, std::vector<Piece>> pieces;  // rank -> what it moves now
};
using FdKey = std::tuple<int32_t, uint32_t, int32_t>;  // rank, thread, global file

// A rank's walk through its collective transfers, shared by both passes.
struct Walk {
  const trace::Plan& plan;
  int32_t rank;
  uint32_t thread;
  std::map<int32_t, int64_t> seen;                 // global file -> collective transfers so far
  std::map<int64_t, std::shared_ptr<View>> views;  // MPI-IO handle -> its view
  int64_t viewing = -1;                            // the handle of the last set_view (its blocks follow)
  int64_t own_seen = 0;                            // independent transfers so far
  // Follows opens, views and their blocks.
  void track(const Event& ev) {
    auto a = mpiio_args(ev);
    if (ev.op() == OpClass::mpiio_open) views.erase(a.handle());
    if (ev.op() == OpClass::mpiio_view) {
      views[a.handle()] =
          std::make_shared<View>(View{a.offset(), a.fextent(), !(a.flags() & trace::fio::kUnflattened), {}});
      viewing = a.handle();
    }
    if (ev.op() == OpClass::mpiio_block && a.handle() == viewing)
      if (auto v = views.find(viewing); v != views.end()) v->second->blocks.emplace_back(a.offset(), a.count());
  }
  Asked asked(const Event& ev) {
    auto a = mpiio_args(ev);
    auto v = views.find(a.handle());
    static const auto plain = std::make_shared<const View>();  // the default view: bytes
    return Asked(a.offset(), a.count(), v == views.end() ? plain : v->second);
  }
  int32_t global(int64_t local) const {
    const auto& files = plan.ranks[size_t(rank)].files;
    return local >= 0 && size_t(local) < files.size() ? files[size_t(local)] : -1;
  }
  CallKey key(const Event& ev) {
    int32_t g = global(mpiio_args(ev).file());
    return {g, thread, seen[g]++};
  }
  OwnKey own_key() { return {rank, thread, own_seen++}; }
};

struct Collected {
  std::map<CallKey, Call> calls;
  // Independent calls through a non-contiguous view (with sieving hints).
  std::map<OwnKey, Call> own;
  std::map<int32_t, int64_t> written_end;  // global file -> the end of the furthest write in the plan
  std::map<FdKey, int64_t> fds;
  uint64_t callsite = 0;  // of a traced nested transfer, for the ones made
  int64_t aio_base = 1;   // past every AIO request id of the plan: the first of the requests made
  // Ranks (and threads) whose streams change: a nested transfer goes, or a
  // request is dealt to them.
  std::set<std::pair<int32_t, uint32_t>> changed;
};

// The end of the furthest POSIX write on each file: what a sieving read of
// an independent call finds (ranks race for it in a real run).
void note_written(const Event& ev, const Walk& w, Collected& out) {
  if (trace::info(ev.kind).family != trace::Family::posix || ev.op() != OpClass::write) return;
  auto a = io_args(ev);
  if (a.offset() < 0 || ev.ret <= 0) return;
  int64_t& end = out.written_end[w.global(a.file())];
  end = std::max(end, a.offset() + ev.ret);
}

void collect_nested(const Event& ev, int32_t rank, Walk& w, Call* in, bool in_open, Collected& out) {
  bool opened = in_open && ev.op() == OpClass::open && ev.ret >= 0;
  if (opened) out.fds[{rank, w.thread, w.global(io_args(ev).file())}] = ev.ret;
  if (!in || !is_nested_transfer(ev)) return;
  out.changed.insert({rank, w.thread});
  auto a = io_args(ev);
  out.fds.try_emplace({rank, w.thread, w.global(a.file())}, a.handle());
  bool same_way = (ev.op() == OpClass::read) == in->read;
  if (!same_way && !in->read) in->rmw_ns += ev.dur_ns, in->rmw_bytes += a.count();
  if (!same_way || a.offset() < 0 || ev.ret <= 0) return;
  in->moved.emplace_back(a.offset(), a.offset() + ev.ret);
  in->ns += ev.dur_ns;
  in->bytes += ev.ret;
  if (out.callsite == 0) out.callsite = ev.callsite;
}

// The call a top-level event starts whose nested transfers are dealt again:
// a collective transfer (with collective hints), or an independent one
// through a non-contiguous view at a known offset (with sieving hints).
Call* dealt_call(const Event& ev, Walk& w, const MpiioHints& h, Collected& out) {
  if (trace::collective_transfer(ev)) {
    CallKey key = w.key(ev);
    if (!h.collective) return nullptr;
    Call* in = &out.calls[key];
    in->ranks.push_back(w.rank), in->read = ev.op() == OpClass::mpiio_read;
    if (mpiio_args(ev).offset() < 0) in->asked_known = false;  // a shared pointer's, not seen
    in->asked.insert_or_assign(w.rank, w.asked(ev));
    return in;
  }
  if (!is_own_transfer(ev)) return nullptr;
  OwnKey key = w.own_key();
  if (!h.sieve || mpiio_args(ev).offset() < 0) return nullptr;
  Asked asked = w.asked(ev);
  if (asked.view->contiguous()) return nullptr;
  Call* in = &out.own[key];
  in->ranks.push_back(w.rank), in->read = ev.op() == OpClass::mpiio_read;
  in->file = w.global(mpiio_args(ev).file());
  in->asked.insert_or_assign(w.rank, std::move(asked));
  return in;
}

Collected collect(const trace::Plan& plan, const MpiioHints& h) {
  Collected out;
  for (const trace::Stream& s : plan.streams)
    for (int64_t r : s.rank_list()) {
      Walk w{plan, int32_t(r), s.thread, {}, {}, -1};
      trace::EventCursor c(s, int32_t(r), Restream::cursor_options());
      Event ev;
      Call* in = nullptr;
      bool in_open = false;
      while (c.next(ev)) {
        if (trace::is_mpiio(ev.kind)) w.track(ev);
        if (trace::info(ev.kind).family == trace::Family::aio)
          out.aio_base = std::max(out.aio_base, aio_args(ev).aio_req() + 1);
        note_written(ev, w, out);
        if (ev.depth > 0) {
          collect_nested(ev, int32_t(r), w, in, in_open, out);
          continue;
        }
        in = dealt_call(ev, w, h, out);
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

// One aggregator's requests over its domain, from the bytes moved when
// traced (the ranks' requests unknown): per cb window from the first byte
// moved in the domain, the bytes moved (writes) or the window's span from
// its first to its last byte moved (reads).
void deal_moved(const std::vector<ByteRange>& runs, ByteRange dom, int64_t cb, bool read, std::vector<Piece>& out) {
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
      if (!read) out.push_back({from, to, false, to - from});
      lo = std::min(lo, from), hi = std::max(hi, to);
    }
    if (read && lo < hi) out.push_back({lo, hi, true, hi - lo});
    while (first != runs.end() && first->second <= wend) ++first;
  }
}

// The aggregators of calls made by the same ranks, found once.
using AggregatorCache = std::map<std::vector<int32_t>, std::vector<int32_t>>;

// Whether ROMIO moves the call's data two-phase with these hints (its
// interleave check under automatic). A call whose offsets were not all
// recorded is taken as two-phase: it was, when traced, where it made
// nested transfers on other ranks' behalf.
bool two_phase(const Call& call, const CollectiveHints& h) {
  CbMode mode = call.read ? h.cb_read : h.cb_write;
  if (!call.asked_known || mode == CbMode::enable) return true;
  if (mode == CbMode::disable) return false;
  std::vector<Request> extents;
  for (const auto& [rank, a] : call.asked) extents.push_back(a.extent);
  if (interleaved(extents)) return true;
  if (call.read || h.striping_factor == 0) return false;
  int64_t bytes = 0, pieces = 0;  // Lustre's romio_lustre_coll_threshold over the ranks' pieces
  for (const auto& [rank, a] : call.asked)
    for (auto [begin, end] : a.pieces()) bytes += end - begin, ++pieces;
  return lustre_docollect(bytes, pieces, h.lustre_coll_threshold);
}

// The call's range for the file domains: the ranks' requests, first to last
// byte (ROMIO's min_st_offset, max_end_offset), else the bytes moved.
ByteRange call_range(const Call& call, const std::vector<ByteRange>& runs) {
  if (!call.asked_known) return {runs.front().first, runs.back().second};
  ByteRange out{INT64_MAX, INT64_MIN};
  for (const auto& [rank, a] : call.asked)
    out = {std::min(out.first, a.extent.first), std::max(out.second, a.extent.last + 1)};
  return out;
}

// OMPIO's dealing of a call (postproc/ompio_layout.hpp), its ranks in
// communicator order; without their offsets, the bytes moved when traced
// taken as the first rank's. False when each rank moves its own request
// (individual).
bool deal_ompio(Call& call, const std::vector<ByteRange>& runs, const CollectiveHints& h, OmpioFcoll asked,
                int64_t file_end) {
  std::vector<std::vector<ByteRange>> pieces;
  int64_t chunk = 0, size = 0, n = int64_t(call.ranks.size());
  for (int32_t r : call.ranks) {
    const Asked& a = call.asked.at(r);
    pieces.push_back(call.asked_known ? a.pieces() : std::vector<ByteRange>{});
    auto [c, v] = a.view->chunk_and_size();
    chunk += c, size += v;
  }
  chunk /= n, size /= n;  // OMPIO's averages over the ranks
  if (!call.asked_known) pieces[0] = runs;
  OmpioFcoll fcoll = ompio_fcoll_of(int(n), asked);
  if (fcoll == OmpioFcoll::individual) {
    for (size_t i = 0; i < pieces.size(); ++i)
      call.pieces[call.ranks[i]] = ompio_individual(pieces[i], call.read, file_end);
    return false;
  }
  int count = ompio_aggregator_count(int(n), chunk, size, {h.cb_nodes, h.cb_buffer_size, fcoll});
  OmpioDealt dealt =
      ompio_collective(pieces, call.read, fcoll, count, h.cb_buffer_size, h.striping_unit, h.striping_factor, file_end);
  for (size_t j = 0; j < dealt.transfers.size(); ++j)
    if (!dealt.transfers[j].empty()) call.pieces[call.ranks[size_t(dealt.movers[j])]] = std::move(dealt.transfers[j]);
  return true;
}

// False when each rank moves its own request instead. `file_end`: the
// file's size before the call, as the calls before it left it.
bool deal(const trace::Plan& plan, Call& call, const MpiioHints& hints, int64_t file_end, AggregatorCache& cache) {
  const CollectiveHints& h = *hints.collective;
  std::vector<ByteRange> runs = union_of(std::move(call.moved));
  if (runs.empty() && !hints.requests_only) return true;
  if (hints.ompio) {
    std::sort(call.ranks.begin(), call.ranks.end());
    return deal_ompio(call, runs, h, hints.ompio_fcoll, file_end);
  }
  if (!two_phase(call, h)) {
    for (auto& [rank, a] : call.asked)
      call.pieces[rank] = strided_transfers(a.pieces(), call.read, hints.sieve.value_or(SieveHints{}), file_end);
    return false;
  }
  std::sort(call.ranks.begin(), call.ranks.end());
  auto [at, fresh] = cache.try_emplace(call.ranks);
  if (fresh) {
    std::vector<std::string> hosts;
    hosts.reserve(call.ranks.size());
    for (int32_t r : call.ranks) hosts.push_back(plan.ranks[size_t(r)].host);
    at->second = aggregator_ranks(call.ranks, hosts, h);
  }
  const std::vector<int32_t>& aggs = at->second;
  auto [lo, hi] = call_range(call, runs);
  std::vector<ByteRange> doms = file_domains(lo, hi, int(aggs.size()), h.striping_unit, h.min_fdomain_size);
  std::vector<ByteRange> requested;
  if (call.asked_known) {
    for (const auto& [rank, a] : call.asked)
      for (const ByteRange& p : a.pieces()) requested.push_back(p);
    requested = union_of(std::move(requested));
  }
  if (!call.read && h.striping_factor > 0) {
    LustreHints lh{h.striping_unit, h.striping_factor, h.lustre_co_ratio, h.lustre_ds_in_coll};
    auto writes =
        lustre_writes(call.asked_known ? requested : runs, lustre_aggregator_count(int(aggs.size()), lh), lh, file_end);
    for (size_t j = 0; j < writes.size(); ++j)
      if (!writes[j].empty()) call.pieces[aggs[j]] = std::move(writes[j]);
    return true;
  }
  for (size_t j = 0; j < doms.size(); ++j) {
    std::vector<Piece> mine;
    if (call.asked_known)
      window_transfers(requested, doms[j], h.cb_buffer_size, call.read, file_end, true, mine);
    else
      deal_moved(runs, doms[j], h.cb_buffer_size, call.read, mine);
    if (!mine.empty()) call.pieces[aggs[j]] = std::move(mine);
  }
  return true;
}

// The requests dealt to a rank for one call, spread over its end: they take
// the traced transfers' time per byte (the data exchange is the rest of the
// call's time).
uint64_t insert_pieces(Restream& b, const Event& ev, const Call& call, const std::vector<Piece>& mine,
                       const TransferSite& site) {
  std::vector<int64_t> dur;
  for (const Piece& p : mine) {
    // A write's read of a hole: at the traced reads' rate, if any.
    bool rmw = p.read != call.read && call.rmw_bytes > 0;
    int64_t ns = rmw ? call.rmw_ns : call.ns, bytes = rmw ? call.rmw_bytes : call.bytes;
    double share = bytes > 0 ? double(p.end - p.begin) / double(bytes) : 0;
    dur.push_back(int64_t(double(ns) * share));
  }
  return insert_transfers(b, ev, mine, dur, site);
}

// The call a top-level event starts, when its transfers were dealt again
// (`file`: its global file).
const Call* dealt_again(const Event& ev, Walk& w, const Collected& got, int32_t& file) {
  if (trace::collective_transfer(ev)) {
    CallKey key = w.key(ev);
    file = std::get<0>(key);
    auto it = got.calls.find(key);
    return it == got.calls.end() ? nullptr : &it->second;
  }
  if (!is_own_transfer(ev)) return nullptr;
  auto it = got.own.find(w.own_key());
  file = w.global(mpiio_args(ev).file());
  return it == got.own.end() ? nullptr : &it->second;
}

// The rank's stream again, the nested transfers of the calls dealt again
// replaced by the requests dealt to it.
trace::Stream rebuild(const trace::Plan& plan, const trace::Stream& s, int32_t rank, Collected& got, uint64_t& made) {
  Walk w{plan, rank, s.thread, {}, {}, -1};
  Restream b(s.lossless);
  b.begin(s, rank);
  trace::EventCursor c(s, rank, Restream::cursor_options());
  Event ev;
  bool in = false;
  int64_t next_aio_id = got.aio_base;
  while (c.next(ev)) {
    if (in && ev.depth > 0 && is_nested_transfer(ev)) continue;
    b.copy(ev.raw());
    if (ev.depth > 0) continue;
    int32_t file = -1;
    const Call* call = dealt_again(ev, w, got, file);
    in = call != nullptr;
    if (!in) continue;
    auto mine = call->pieces.find(rank);
    if (mine == call->pieces.end()) continue;
    auto fd = got.fds.find({rank, s.thread, file});
    if (fd == got.fds.end())
      throw ToolError(fmt::format("rank {} cannot move data for the others: it never opened {} at the POSIX level",
                                  rank, plan.files[size_t(file)].path));
    made += insert_pieces(b, ev, *call, mine->second, {fd->second, mpiio_args(ev).file(), got.callsite, &next_aio_id});
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

// A call dealt from its ranks' requests alone: its transfers' time at the
// rate given, a write's reads of its holes at the read rate.
void time_at_rate(Call& call, const RequestRate& rate) {
  for (const auto& [rank, pieces] : call.pieces)
    for (const Piece& p : pieces) {
      bool same_way = p.read == call.read;
      double per_byte = p.read ? rate.read_ns_per_byte : rate.write_ns_per_byte;
      auto ns = int64_t(per_byte * double(p.end - p.begin));
      (same_way ? call.bytes : call.rmw_bytes) += p.end - p.begin;
      (same_way ? call.ns : call.rmw_ns) += ns;
    }
}

// Deals each collective call's transfers to its aggregators, or to its
// ranks when ROMIO would not move it two-phase.
void deal_collective(const trace::Plan& plan, const MpiioHints& hints, Collected& got, Redealt& out) {
  AggregatorCache cache;
  std::map<int32_t, int64_t> file_end;  // global file -> the end of what the calls so far wrote
  for (auto& [key, call] : got.calls) {
    if (call.moved.empty() && !hints.requests_only) continue;
    int64_t& end = file_end[std::get<0>(key)];
    if (!deal(plan, call, hints, end, cache)) ++out.independent;
    if (hints.requests_only) time_at_rate(call, *hints.requests_only);
    for (const auto& [rank, pieces] : call.pieces)
      for (const Piece& p : pieces)
        if (!p.read) end = std::max(end, p.end);
    ++out.calls;
    out.aggregators = std::max(out.aggregators, int32_t(call.pieces.size()));
    for (const auto& [rank, pieces] : call.pieces) got.changed.insert({rank, std::get<1>(key)});
  }
}

void deal_strided(const SieveHints& h, Collected& got, Redealt& out) {
  for (auto& [key, call] : got.own) {
    const auto& [rank, asked] = *call.asked.begin();
    call.pieces[rank] = strided_transfers(asked.pieces(), call.read, h, got.written_end[call.file]);
    got.changed.insert({rank, std::get<1>(key)});
    ++out.strided;
  }
}

// The Lustre driver's hints, for the note of a Lustre file.
std::string lustre_hints_text(const CollectiveHints& h) {
  if (h.striping_factor == 0) return "";
  return fmt::format(" (romio_lustre_co_ratio {}, romio_lustre_coll_threshold {}, romio_lustre_ds_in_coll {})",
                     h.lustre_co_ratio, h.lustre_coll_threshold, h.lustre_ds_in_coll ? "enable" : "disable");
}

void add_notes(trace::Plan& plan, const MpiioHints& hints, const Redealt& out) {
  // The streams are numbered anew: the notes before these name the streams
  // and positions as extrapolated.
  if (const CollectiveHints* h = hints.collective ? &*hints.collective : nullptr; h && out.calls > 0 && hints.ompio)
    plan.extrap.notes.push_back(
        {-1, -1, -1, "aggregators",
         fmt::format("the POSIX transfers of {} collective calls dealt as Open MPI's OMPIO deals them (fcoll {}, "
                     "fbtl posix) to {} aggregators (cb_nodes {}, cb_buffer_size {}), {} of them moved by each rank "
                     "alone, {} transfers (notes above: streams before)",
                     out.calls, ompio_fcoll_name(hints.ompio_fcoll), out.aggregators, h->cb_nodes, h->cb_buffer_size,
                     out.independent, out.transfers),
         "cb_nodes"});
  else if (h && out.calls > 0)
    plan.extrap.notes.push_back(
        {-1, -1, -1, "aggregators",
         fmt::format(
             "the POSIX transfers of {} collective calls dealt to {} aggregators (cb_config_list {}, "
             "striping_unit {}, striping_factor {}{}, romio_min_fdomain_size {}, romio_cb_read {}, romio_cb_write {}) "
             "in requests of at most {} bytes, {} of them moved by each rank alone, {} transfers (notes above: "
             "streams before)",
             out.calls, h->cb_nodes, h->cb_config_list, h->striping_unit, h->striping_factor, lustre_hints_text(*h),
             h->min_fdomain_size, cb_mode_name(h->cb_read), cb_mode_name(h->cb_write), h->cb_buffer_size,
             out.independent, out.transfers),
         "cb_nodes"});
  if (const SieveHints* h = hints.sieve ? &*hints.sieve : nullptr; h && out.strided > 0)
    plan.extrap.notes.push_back(
        {-1, -1, -1, "data sieving",
         fmt::format("the POSIX transfers of {} independent calls through non-contiguous views made again as "
                     "ROMIO makes them (romio_ds_read {}, romio_ds_write {}, ind_rd_buffer_size {}, "
                     "ind_wr_buffer_size {}) (notes above: streams before)",
                     out.strided, cb_mode_name(h->ds_read), cb_mode_name(h->ds_write), h->ind_rd_buffer_size,
                     h->ind_wr_buffer_size),
         "romio_ds"});
}

}  // namespace

Redealt redeal_mpiio(trace::Plan& plan, const MpiioHints& hints) {
  if (hints.collective && hints.ompio && hints.collective->cb_nodes == -1) {
    if (hints.collective->cb_buffer_size < 1) throw ToolError("the collective buffer size must be at least one byte");
  } else if (hints.collective) {
    check_hints(*hints.collective);
  }
  if (hints.ompio_fcoll != OmpioFcoll::automatic && !hints.ompio)
    throw ToolError("an OMPIO collective component (fcoll) was asked for a job not traced under Open MPI's OMPIO");
  if (hints.sieve) check_sieve_hints(*hints.sieve);
  Collected got = collect(plan, hints);
  Redealt out;
  if (hints.collective) deal_collective(plan, hints, got, out);
  if (hints.sieve) deal_strided(*hints.sieve, got, out);
  if (out.calls == 0 && out.strided == 0) return out;
  plan.streams = restreamed(plan, got, out.transfers);
  add_notes(plan, hints, out);
  return out;
}

}  // namespace mpior::postproc
