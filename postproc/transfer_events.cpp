#include "postproc/transfer_events.hpp"

#include <algorithm>

#include "trace/arg_views.hpp"

namespace mpior::postproc {

namespace {

using trace::Kind;
using trace::RawEvent;

RawEvent nested(Kind kind, uint8_t depth, int64_t at, int64_t end, const TransferSite& site) {
  RawEvent ev;
  ev.kind = kind;
  ev.depth = depth;
  ev.callsite = site.callsite;
  ev.start = at;
  ev.end = end;
  auto a = io_args(ev);
  a.handle() = site.fd;
  a.file() = site.file;
  return ev;
}

// A synchronous transfer: what ROMIO or OMPIO's fbtl calls.
RawEvent transfer_event(const PosixTransfer& t, int64_t at, int64_t end, const TransferSite& site) {
  Kind kind = t.vectored ? (t.read ? Kind::preadv : Kind::pwritev) : (t.read ? Kind::pread : Kind::pwrite);
  RawEvent ev = nested(kind, 1, at, end, site);
  auto a = io_args(ev);
  a.offset() = t.begin;
  a.count() = t.end - t.begin;
  ev.ret = t.ret;
  return ev;
}

// A request's record: its submit, or (kind mpior_aio_done) its completion.
RawEvent request_event(Kind kind, const PosixTransfer& t, int64_t id, int64_t at, const TransferSite& site) {
  bool done = kind == Kind::mpior_aio_done;
  RawEvent ev = nested(kind, done ? 2 : 1, at, at, site);
  auto a = aio_args(ev);
  a.offset() = t.begin;
  a.count() = t.end - t.begin;
  a.lio_op() = t.read ? trace::kAioRead : trace::kAioWrite;
  a.aio_req() = id;
  if (done) {
    a.submit_depth() = 1;
    a.submit_kind() = int64_t(t.read ? Kind::aio_read : Kind::aio_write);
  }
  ev.ret = done ? t.ret : 0;
  return ev;
}

// The batch's requests learned done, in submit order, at `at`.
void complete(Restream& b, const std::vector<PosixTransfer>& batch, int64_t first_id, int64_t at,
              const TransferSite& site) {
  for (size_t i = 0; i < batch.size(); ++i) {
    RawEvent test = nested(Kind::aio_error, 1, at, at, site);
    test.ret = 0;
    b.insert(test);
    b.insert(request_event(Kind::mpior_aio_done, batch[i], first_id + int64_t(i), at, site));
    RawEvent ret = nested(Kind::aio_return, 1, at, at, site);
    ret.ret = batch[i].ret;
    b.insert(ret);
  }
}

}  // namespace

uint64_t insert_transfers(Restream& b, const trace::Event& call, const std::vector<PosixTransfer>& mine,
                          const std::vector<int64_t>& dur, const TransferSite& site) {
  int64_t total = 0;
  for (int64_t d : dur) total += d;
  int64_t at = std::max(call.start_ns, call.end_ns - total);
  std::vector<PosixTransfer> batch;  // AIO requests submitted, not yet waited for
  int64_t first_id = 0, in_flight = 0;
  for (size_t i = 0; i < mine.size(); ++i) {
    const PosixTransfer& t = mine[i];
    if (!t.async) {
      int64_t end = std::min(call.end_ns, at + dur[i]);
      b.insert(transfer_event(t, at, end, site));
      at = end;
      continue;
    }
    if (batch.empty()) first_id = *site.next_aio_id;
    b.insert(request_event(t.read ? Kind::aio_read : Kind::aio_write, t, (*site.next_aio_id)++, at, site));
    batch.push_back(t);
    in_flight += dur[i];
    if (!t.waited && i + 1 < mine.size()) continue;
    at = std::min(call.end_ns, at + in_flight);
    complete(b, batch, first_id, at, site);
    batch.clear(), in_flight = 0;
  }
  return mine.size();
}

}  // namespace mpior::postproc
