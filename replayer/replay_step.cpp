// What a replay thread does with each event, one handler per family: the
// table in engine.cpp (step, nested) picks it by the event's kind.
#include <fcntl.h>

#include <vector>

#include "replayer/replay_thread.hpp"
#include "trace/arg_views.hpp"

namespace mpior::replay {

void ReplayThread::begin_file_call(const trace::Event& ev, uint64_t event_no, bool native) {
  // Field by field: `fscope_ = {}` would clear its Event on every replayed call.
  fscope_.open_pending = fscope_.creating = false;
  fscope_.file = -1;
  trace::OpClass op = ev.op();
  fscope_.nested_io = !sh_.opt.mpiio_level && !native &&
                      (trace::is_mpiio(ev.kind) || op == trace::OpClass::wait || op == trace::OpClass::test);
  // MPI mode's MPI-IO through MPI_File_* synchronises in MPI (mpi_file.cpp).
  fscope_.sync_after = !native && trace::is_mpiio(ev.kind) && syncs_after(ev);
  fscope_.open_pending = fscope_.nested_io && op == trace::OpClass::mpiio_open;
  if (fscope_.open_pending) fscope_.file = io_args(ev).file();
  if (fscope_.open_pending || fscope_.sync_after) {
    fscope_.call = ev;
    fscope_.event_no = event_no;
  }
}

bool ReplayThread::nested_io(const trace::Event& ev, IoReplay& io, MpiOps& mpi) {
  trace::OpClass op = ev.op();
  bool same = io_args(ev).file() == fscope_.file, going = true;
  if (fscope_.open_pending && same && op == trace::OpClass::open) {
    if (file_args(ev).flags() & O_CREAT)
      fscope_.creating = true;
    else
      going = release_open(mpi);
  }
  int64_t t = mono_now_ns();
  io.set_racing_unlinks(trace::info(cur_.kind).op == trace::OpClass::mpiio_close);
  IoOutcome r = io.replay(ev);
  int64_t end = mono_now_ns();
  if (r.replayed) ops.add(ev.kind, end - t, r.bytes);
  if (!sh_.opt.io_log.empty()) log_io(ev, t, end);
  if (fscope_.open_pending && fscope_.creating && same && op == trace::OpClass::close)
    going = release_open(mpi) && going;
  last_end_ = mono_now_ns();
  return going;
}

IoOutcome ReplayThread::replay_io(const trace::Event& ev, IoReplay& io) {
  constexpr int64_t kBoundNs = 30'000'000'000;  // a thread that went another way than traced
  if (order_slot < 0 || !FileOrder::orders(ev) || !sh_.order->others_change(order_slot, ev)) return io.replay(ev);
  io.hold_name_failures(true);
  FileOrder::Pending pending = sh_.order->pending_changes(order_slot, ev);
  IoOutcome r = io.replay(ev);
  while (io.failure_held()) {
    int64_t t = mono_now_ns();
    bool changed = sh_.order->wait_for_change(pending, sh_.progress.aborted(), kBoundNs);
    acct_.waited += mono_now_ns() - t;
    if (!changed) break;
    io.hold_name_failures(true);
    pending = sh_.order->pending_changes(order_slot, ev);
    r = io.replay(ev);
  }
  io.record_held();
  io.hold_name_failures(false);
  return r;
}

// A collective on MPI_COMM_WORLD that no member leaves before every member
// arrived: what each rank did before it, every rank's calls after it follow.
bool ReplayThread::syncs_world(const trace::Event& ev) const {
  trace::OpClass op = ev.op();
  if (op != trace::OpClass::barrier && op != trace::OpClass::allcoll) return false;
  // a scan waits only for lower ranks; a neighbour for neighbours
  if (trace::has_fact(ev.kind, trace::fact::prefix | trace::fact::neighbor)) return false;
  const std::vector<int32_t>& comms = sh_.plan.ranks[size_t(summary.rank)].comms;
  int64_t local = mpi_args(ev).comm();
  if (local < 0 || size_t(local) >= comms.size() || comms[size_t(local)] < 0) return false;
  return sh_.plan.comms[size_t(comms[size_t(local)])].origin == trace::CommOrigin::world;
}

// POSIX, stdio, AIO and mapping calls.
bool ReplayThread::top_io(const trace::Event& ev, uint64_t, Tools& t, int64_t start) {
  IoOutcome r = replay_io(ev, t.io);
  cur_.bytes = r.bytes;
  if (r.call_ns > 0) {
    if (!sh_.opt.io_log.empty()) log_io(ev, r.end_ns - r.call_ns, r.end_ns);
    pay_dispatch(start, r);
    return true;
  }
  if (!r.replayed) {
    // Failed when traced: its time passes as if it were compute (not
    // with --io-only, which drops compute).
    ++skipped;
    cur_.active = false;
    last_end_ = sh_.opt.io_only ? mono_now_ns() : sleep_until(start + ev.dur_ns, sh_.progress.aborted());
    if (!sh_.opt.io_log.empty()) log_io(ev, start, last_end_);
    return true;
  }
  last_end_ = mono_now_ns();
  if (!sh_.opt.io_log.empty()) log_io(ev, start, last_end_);
  return true;
}

// MPI_File_* calls: MPI mode's are MPI's own (collective forms are its
// collectives); otherwise the collective forms meet here, and the file
// system sees ROMIO's POSIX calls nested under them (or, with
// --mpiio-level, the calls MpiioReplay makes).
bool ReplayThread::top_mpiio(const trace::Event& ev, uint64_t event_no, Tools& t, int64_t start) {
  bool going = true;
  if (t.mpi.native_mpiio()) {
    cur_.bytes = t.mpi.mpiio(ev);
    last_end_ = mono_now_ns();
    if (!sh_.opt.io_log.empty()) log_io(ev, start, last_end_);
    return going;
  }
  int64_t flags = mpiio_args(ev).flags();
  bool coll = (flags & trace::fio::kColl) && !(flags & trace::fio::kEnd);
  if (coll && !fscope_.open_pending) {
    clear_last_release();
    going = waiting([&] { return t.mpi.file_barrier(ev, event_no); });
    // ROMIO's own exchange beyond the meeting (comm_cost.hpp).
    int64_t cost = going && !sh_.opt.io_only ? sh_.costs.mpiio_cost(sh_.plan, ev) : 0;
    if (cost > 0) charge_after_sync(cost);
  }
  bool moves = ev.op() == trace::OpClass::mpiio_read || ev.op() == trace::OpClass::mpiio_write;
  if (sh_.opt.mpiio_level) {
    int64_t t0 = sh_.opt.io_log.empty() ? 0 : mono_now_ns();
    cur_.bytes = t.mio.replay(ev);
    if (!sh_.opt.io_log.empty()) log_io(ev, t0, mono_now_ns());
  } else if (moves && ev.ret == 0 && !(flags & trace::fio::kEnd)) {
    cur_.bytes = io_args(ev).count();
  }
  last_end_ = mono_now_ns();
  return going;
}

// Start-up: the ranks meet in MPI_Init (init_gate.hpp; MPI mode's processes
// met in their own); other inits' traced time passes as it did (--io-only:
// not at all).
bool ReplayThread::top_init(const trace::Event& ev, uint64_t, Tools&, int64_t start) {
  cur_.active = false;
  bool going = true;
  bool first = !sh_.opt.io_only && !met_init_ && InitGate::meets(ev.kind);
  if (first && !sh_.opt.backend) {
    going = waiting([&] { return sh_.init.meet(sh_.progress.aborted()); });
    if (going) last_end_ = charge(last_end_, sh_.init.floor_ns());
  } else {
    last_end_ = sh_.opt.io_only ? mono_now_ns() : sleep_until(start + ev.dur_ns, sh_.progress.aborted());
  }
  if (first) met_init_ = true, summary.startup_ns = last_end_ - t0_;
  if (first) summary.traced_startup_ns = ev.end_ns + sh_.start_of(summary.rank);
  return going;
}

bool ReplayThread::top_mpi(const trace::Event& ev, uint64_t event_no, Tools& t, int64_t start) {
  cur_.bytes = mpi_args(ev).bytes();
  bool going = mpi_call(ev, event_no, t.mpi, start);
  if (syncs_world(ev)) t.io.sizes().world_synced();
  return going;
}

// The tracer's records belong under a call; one at depth 0 is not replayed.
bool ReplayThread::top_record(const trace::Event&, uint64_t, Tools&, int64_t) {
  cur_.active = false;
  last_end_ = mono_now_ns();
  return true;
}

// Nested records belong to their parent's duration; only these matter.
// A receive or collective a Wait/Test completed.
bool ReplayThread::sub_complete(const trace::Event& ev, uint64_t delivered, Tools& t) {
  if (ev.depth != 1 || !cur_.waits) return true;
  bool going = waiting([&] { return t.mpi.complete(ev, delivered); });
  if (budget > 0 && mpi_args(ev).req_kind() == trace::kReqRecv) record_completion(ev);
  return going;
}

// A member a rooted collective's root waited for (its call pruned).
bool ReplayThread::sub_member(const trace::Event& ev, uint64_t delivered, Tools& t) {
  return ev.depth != 1 || waiting([&] { return t.mpi.member(ev, delivered); });
}

bool ReplayThread::sub_topology(const trace::Event& ev, uint64_t, Tools& t) {
  t.mpi.topology(ev);
  return true;
}

// A block of the view MPI_File_set_view set: MPI mode's view, or
// --mpiio-level's.
bool ReplayThread::sub_block(const trace::Event& ev, uint64_t, Tools& t) {
  if (t.mpi.native_mpiio())
    t.mpi.mpiio_block(ev);
  else if (sh_.opt.mpiio_level)
    t.mio.block(ev);
  return true;
}

// AIO completions wherever they sit; submits listed by the application's
// lio_listio. Under an MPI-IO call (or its Wait) the submits are ROMIO's,
// replayed with the other POSIX calls.
bool ReplayThread::sub_aio(const trace::Event& ev, uint64_t delivered, Tools& t) {
  if (ev.op() != trace::OpClass::adone && fscope_.nested_io) return sub_file(ev, delivered, t);
  bool under_list = ev.depth == 1 && trace::info(cur_.kind).op == trace::OpClass::alist;
  IoOutcome r = t.io.nested(ev, under_list);
  if (r.replayed) last_end_ = mono_now_ns();
  if (under_list) cur_.bytes += r.bytes;  // lio_listio's, io_submit's requests
  return true;
}

// POSIX, stdio and mapping calls ROMIO made under an MPI-IO call.
bool ReplayThread::sub_file(const trace::Event& ev, uint64_t, Tools& t) {
  return !fscope_.nested_io || nested_io(ev, t.io, t.mpi);
}

// What MPI and MPI-IO calls made inside another call was the library's own.
bool ReplayThread::sub_ignored(const trace::Event&, uint64_t, Tools&) { return true; }

}  // namespace mpior::replay
