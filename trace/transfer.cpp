#include "trace/transfer.hpp"

namespace mpior::trace {

int transfers(const Event& ev, Transfer out[2]) {
  OpClass op = ev.op();
  bool stdio = info(ev.kind).family == Family::stdio;
  switch (op) {
    case OpClass::read:
    case OpClass::write:
      if (ev.ret < 0) return 0;
      out[0] = {arg::file, ev.args[arg::offset], ev.ret, op == OpClass::write, false, stdio};
      return 1;
    case OpClass::adone: {
      int64_t lop = ev.args[arg::lio_op];
      if (ev.ret < 0 || (lop != kAioRead && lop != kAioWrite)) return 0;
      out[0] = {arg::file, ev.args[arg::offset], ev.ret, lop == kAioWrite, false, false};
      return 1;
    }
    case OpClass::copy: {
      if (ev.ret <= 0) return 0;
      int n = 0;
      if (ev.args[arg::file] >= 0) out[n++] = {arg::file, ev.args[arg::offset], ev.ret, false, false, false};
      if (ev.args[arg::file2] >= 0) out[n++] = {arg::file2, ev.args[arg::offset2], ev.ret, true, false, false};
      return n;
    }
    case OpClass::map:  // a readable mapping reads its range within the file
    case OpClass::msync:
    case OpClass::unmap:  // a shared writable mapping writes its range back
    case OpClass::remap:  // as the tail a shrink unmaps
      if (ev.ret < 0 || ev.args[arg::count] <= 0) return 0;
      out[0] = {arg::file, ev.args[arg::offset], ev.args[arg::count], op != OpClass::map, true, false};
      return 1;
    default:
      return 0;
  }
}

bool app_level(const Event& ev) {
  if (ev.op() == OpClass::adone) return ev.args[arg::submit_depth] == 0;
  return ev.depth == 0;
}

Level LevelTracker::observe(int32_t rank, const Event& ev) {
  if (ev.depth == 0) under_mpiio_ = is_mpiio(ev.kind);
  OpClass op = ev.op();
  if (op == OpClass::asubmit && ev.depth != 0 && under_mpiio_) mpiio_aio_.insert({rank, ev.args[arg::aio_req]});
  if (op == OpClass::adone) {
    if (app_level(ev)) return Level::app;
    return mpiio_aio_.erase({rank, ev.args[arg::aio_req]}) ? Level::mpiio : Level::nested;
  }
  if (ev.depth == 0) return Level::app;
  return under_mpiio_ ? Level::mpiio : Level::nested;
}

}  // namespace mpior::trace
