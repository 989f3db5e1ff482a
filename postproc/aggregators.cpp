#include "postproc/aggregators.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
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
using Extent = std::pair<int64_t, int64_t>;  // [begin, end)

bool is_collective_write(const Event& ev) {
  if (ev.depth != 0 || !trace::is_mpiio(ev.kind) || ev.op() != OpClass::mpiio_write) return false;
  int64_t flags = mpiio_args(ev).flags();
  return (flags & trace::fio::kColl) && !(flags & trace::fio::kEnd);
}

bool is_nested_transfer(const Event& ev) {
  return ev.depth > 0 && trace::info(ev.kind).family == trace::Family::posix &&
         (ev.op() == OpClass::read || ev.op() == OpClass::write);
}

// One collective write: the k-th on a global file by one thread of each rank.
using CallKey = std::tuple<int32_t, uint32_t, int64_t>;  // global file, thread, ordinal
struct Call {
  std::vector<Extent> written;                    // nested writes' extents, every rank's
  int64_t write_ns = 0, bytes = 0;                // the time they took, the bytes they wrote
  std::vector<int32_t> ranks;                     // who made it
  std::map<int32_t, std::vector<Extent>> pieces;  // rank -> (offset, bytes) it writes now
};
using FdKey = std::tuple<int32_t, uint32_t, int32_t>;  // rank, thread, global file

// A rank's walk through its collective writes, shared by both passes.
struct Walk {
  const trace::Plan& plan;
  int32_t rank;
  uint32_t thread;
  std::map<int32_t, int64_t> seen;  // global file -> collective writes so far
  int32_t global(int64_t local) const {
    const auto& files = plan.ranks[size_t(rank)].files;
    return local >= 0 && size_t(local) < files.size() ? files[size_t(local)] : -1;
  }
  CallKey key(const Event& ev) {
    int32_t g = global(mpiio_args(ev).file());
    return {g, thread, seen[g]++};
  }
};

void collect(const trace::Plan& plan, std::map<CallKey, Call>& calls, std::map<FdKey, int64_t>& fds,
             uint64_t& callsite) {
  for (const trace::Stream& s : plan.streams)
    for (int64_t r : s.rank_list()) {
      Walk w{plan, int32_t(r), s.thread, {}};
      trace::EventCursor c(s, int32_t(r), Restream::cursor_options());
      Event ev;
      Call* in = nullptr;
      bool in_open = false;
      while (c.next(ev)) {
        if (ev.depth == 0) {
          in = is_collective_write(ev) ? &calls[w.key(ev)] : nullptr;
          if (in) in->ranks.push_back(int32_t(r));
          in_open = trace::is_mpiio(ev.kind) && ev.op() == OpClass::mpiio_open;
          continue;
        }
        bool opened = in_open && ev.op() == OpClass::open && ev.ret >= 0;
        if (opened) fds[{int32_t(r), s.thread, w.global(io_args(ev).file())}] = ev.ret;
        if (!in || !is_nested_transfer(ev)) continue;
        auto a = io_args(ev);
        fds.try_emplace({int32_t(r), s.thread, w.global(a.file())}, a.handle());
        if (ev.op() != OpClass::write || a.offset() < 0 || ev.ret <= 0) continue;
        in->written.emplace_back(a.offset(), a.offset() + ev.ret);
        in->write_ns += ev.dur_ns;
        in->bytes += ev.ret;
        if (callsite == 0) callsite = ev.callsite;
      }
    }
}

// The extents merged, ascending.
std::vector<Extent> union_of(std::vector<Extent> v) {
  std::sort(v.begin(), v.end());
  std::vector<Extent> out;
  for (const Extent& e : v)
    if (!out.empty() && e.first <= out.back().second)
      out.back().second = std::max(out.back().second, e.second);
    else
      out.push_back(e);
  return out;
}

void deal(Call& call, int aggregators, int64_t cb) {
  std::vector<Extent> runs = union_of(std::move(call.written));
  if (runs.empty()) return;
  std::sort(call.ranks.begin(), call.ranks.end());
  int64_t lo = runs.front().first, hi = runs.back().second;
  int64_t k = std::min<int64_t>(aggregators, int64_t(call.ranks.size()));
  int64_t size = (hi - lo + k - 1) / k;
  for (int64_t j = 0; j < k; ++j) {
    int64_t dlo = lo + j * size, dhi = std::min(hi, dlo + size);
    for (int64_t w = dlo; w < dhi; w += cb)  // one two-phase cycle: a buffer's window
      for (const Extent& e : runs) {
        int64_t from = std::max(e.first, w), to = std::min({e.second, w + cb, dhi});
        if (from < to) call.pieces[call.ranks[size_t(j)]].emplace_back(from, to - from);
      }
  }
}

// The rank's stream again, its collective writes' nested transfers replaced
// by the pieces dealt to it, spread over the call's span.
trace::Stream rebuild(const trace::Plan& plan, const trace::Stream& s, int32_t rank, std::map<CallKey, Call>& calls,
                      const std::map<FdKey, int64_t>& fds, uint64_t callsite, uint64_t& writes) {
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
    in = is_collective_write(ev);
    if (!in) continue;
    CallKey key = w.key(ev);
    auto mine = calls[key].pieces.find(rank);
    if (mine == calls[key].pieces.end()) continue;
    auto fd = fds.find({rank, s.thread, std::get<0>(key)});
    if (fd == fds.end())
      throw ToolError(fmt::format("rank {} cannot write for the others: it never opened {} at the POSIX level", rank,
                                  plan.files[size_t(std::get<0>(key))].path));
    // The writes take the traced writes' time per byte, at the end of the
    // call (the data exchange before them is the rest of the call's time).
    const Call& call = calls[key];
    std::vector<int64_t> dur;
    int64_t total = 0;
    for (const Extent& p : mine->second)
      total +=
          dur.emplace_back(call.bytes > 0 ? int64_t(double(call.write_ns) * double(p.second) / double(call.bytes)) : 0);
    int64_t at = std::max(ev.start_ns, ev.end_ns - total);
    for (size_t i = 0; i < dur.size(); ++i) {
      trace::RawEvent piece;
      piece.kind = trace::Kind::pwrite;  // what ROMIO calls
      piece.depth = 1;
      piece.callsite = callsite;
      piece.start = at;
      piece.end = at = std::min(ev.end_ns, at + dur[i]);
      auto a = io_args(piece);
      a.handle() = fd->second;
      a.file() = mpiio_args(ev).file();
      a.offset() = mine->second[i].first;
      a.count() = piece.ret = mine->second[i].second;
      b.insert(piece);
      ++writes;
    }
  }
  return b.finish(rank, s.thread);
}

}  // namespace

Redealt redeal_collective_writes(trace::Plan& plan, int aggregators, int64_t cb_buffer_size) {
  if (aggregators < 1) throw ToolError("the number of aggregators must be at least 1");
  if (cb_buffer_size < 1) throw ToolError("the collective buffer size must be at least one byte");
  std::map<CallKey, Call> calls;
  std::map<FdKey, int64_t> fds;
  uint64_t callsite = 0;
  collect(plan, calls, fds, callsite);
  Redealt out;
  for (auto& [key, call] : calls) {
    if (call.written.empty()) continue;
    deal(call, aggregators, cb_buffer_size);
    ++out.calls;
    out.writers = std::max(out.writers, int32_t(call.pieces.size()));
  }
  if (out.calls == 0) return out;
  std::vector<std::pair<std::pair<int32_t, uint32_t>, trace::Stream>> per_rank;
  for (const trace::Stream& s : plan.streams)
    for (int64_t r : s.rank_list())
      per_rank.push_back({{int32_t(r), s.thread}, rebuild(plan, s, int32_t(r), calls, fds, callsite, out.writes)});
  std::stable_sort(per_rank.begin(), per_rank.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<trace::Stream> streams;
  for (auto& [who, s] : per_rank) streams.push_back(std::move(s));
  plan.streams = merge::merge_streams(std::move(streams));
  // The streams are numbered anew: the notes before this one name the
  // streams and positions as extrapolated.
  plan.extrap.notes.push_back({-1, -1, -1, "aggregators",
                               fmt::format("the POSIX writes of {} collective writes dealt to {} aggregators in "
                                           "requests of at most {} bytes, {} writes (notes above: streams before)",
                                           out.calls, aggregators, cb_buffer_size, out.writes),
                               "cb_nodes"});
  return out;
}

}  // namespace mpior::postproc
