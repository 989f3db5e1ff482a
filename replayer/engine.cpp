#include "replayer/engine.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "replayer/aio_replay.hpp"
#include "replayer/kind_table.hpp"
#include "replayer/pacing_clock.hpp"
#include "replayer/replay_thread.hpp"
#include "replayer/thread_stacks.hpp"
#include "trace/arg_views.hpp"

namespace mpior::replay {

void ReplayThread::run() {
  IoReplay io(sh_.target, sh_.plan, summary.rank, sh_.errors, sh_.progress, who_);
  std::unique_ptr<MpiOps> ops =
      sh_.opt.backend ? sh_.opt.backend->ops(summary.rank, sh_.errors, io, sh_.target, who_, sh_.mpi.channels())
                      : std::make_unique<ThreadMpi>(sh_.mpi, sh_.plan, summary.rank, sh_.errors, who_);
  MpiOps& mpi = *ops;
  MpiioReplay mio(io, sh_.target, sh_.pointers);
  Tools tools{io, mpi, mio};
  io.sizes() = SizeLog(sh_.plan.ranks[size_t(summary.rank)].start_ns, stream_.lossless);
  trace::EventCursor cursor(stream_, summary.rank, sh_.opt.cursor);
  trace::Event ev;
  const int64_t t0 = t0_ = sh_.gate.arrive();
  arrived_ = true;
  const int64_t cpu_wait0 = sh_.cpu_wait_read ? thread_cpu_wait_ns() : 0;
  const ThreadCpus cpus = current_thread_cpus();  // as --bind placed it
  summary.cpus = cpus.count, summary.first_cpu = cpus.first;
  const auto& aborted = sh_.progress.aborted();
  const int64_t started = t0 + sh_.start_of(summary.rank);  // as the launcher started the rank
  sleep_until(started, aborted);                            // the gate opens a little ahead of the common start
  // --io-only drops the gaps here, not only in the CLI: a gap slept is a
  // late wake-up owed, where nothing can be.
  pacer_ = Pacer(started, sh_.opt.io_only ? 0.0 : sh_.opt.compute_scale);
  last_end_ = started;
  bool going = true;
  while (going && !aborted.load(std::memory_order_relaxed) && cursor.next(ev)) {
    if (ev.depth != 0) {
      going = nested(ev, cursor.delivered(), tools);
      continue;
    }
    mpi.settle();
    if (fscope_.open_pending) going = release_open(mpi) && going;
    if (fscope_.sync_after) going = release_after(mpi, io) && going;
    pay_owed(mpi, true);  // a Wait's cost, after its completions
    finish(last_end_);
    close_account(last_end_);
    pacer_.mark_end(last_end_);
    settle_agreement(&ev, mpi);
    mpi.long_gaps += ev.gap_ns >= MpiOps::kSettleGapNs;
    int64_t deadline = pacer_.deadline_for(ev.gap_ns);
    // No gap left: the replay's own time since the last call ended becomes debt that later gaps and
    // charged costs pay back. --io-only has neither: no clock read.
    QueuedWake wake(sh_.cpu_wait_read, last_end_, deadline);
    // A read or write with no gap to sleep starts where the last call ended
    // (pay_dispatch counts the time since as the replay's own): two clock
    // readings an event instead of five.
    int64_t woke = deadline > last_end_                            ? mpi.idle_until(deadline, aborted)
                   : sh_.opt.io_only || IoReplay::times_itself(ev) ? last_end_
                                                                   : mono_now_ns();
    int64_t queued = wake.queued(deadline, woke);
    pacer_.woke_at(deadline, woke - queued);
    summary.compute_ns += woke - last_end_;
    summary.traced_compute_ns += std::max<int64_t>(0, ev.gap_ns);
    traced_end_ = std::max(traced_end_, ev.end_ns);
    woke = keep_file_order(ev, woke);
    going = step(ev, cursor.delivered(), tools, woke) && going;
    if (order_slot >= 0) sh_.order->replayed(order_slot, cursor.delivered());
  }
  if (order_slot >= 0) sh_.order->finished(order_slot);  // a thread that stopped early holds no one back
  wind_up(tools, going, cpu_wait0);
}

// After the stream's last event: what is still pending, then the summary.
void ReplayThread::wind_up(Tools& t, bool going, int64_t cpu_wait0) {
  MpiOps& mpi = t.mpi;
  IoReplay& io = t.io;
  // Compared against the traced time its events span: after the last call
  // the trace holds the tracer's own finalize (merging, writing) and the
  // exit, which the replay does not reproduce. The rank's waits for a CPU
  // left out of its gaps passed on its wall clock all the same (counted on
  // its first thread: the tracer sums them per process).
  int64_t cpu_wait = summary.thread == 0 ? sh_.plan.ranks[size_t(summary.rank)].cpu_wait_ns : 0;
  if (traced_end_ > 0) summary.traced_ns = traced_end_ + sh_.start_of(summary.rank) + cpu_wait;
  if (going && fscope_.open_pending) going = release_open(mpi);
  if (going && fscope_.sync_after) release_after(mpi, io);
  mpi.settle();
  settle_agreement(nullptr, mpi);
  mpi.finish();
  pay_owed(mpi, false);
  finish(last_end_);
  close_account(last_end_);
  io.close_all();
  sizes = std::move(io.sizes());
  end_ns = mono_now_ns();
  // The lateness no gap, cost or wait absorbed: the replay's, not the program's.
  summary.unpaid_ns = pacer_.debt();
  summary.sender_wait_ns = mpi.sender_wait_ns();
  summary.replay_ns = end_ns - t0_ - summary.unpaid_ns;
  if (sh_.cpu_wait_read) summary.cpu_wait_ns = std::max<int64_t>(0, thread_cpu_wait_ns() - cpu_wait0);
}

// The depth-0 handler of each kind. Every kind of the lists in trace/api/
// gets its family's; a new family, or a new tracer record, fails the build
// until it registers one here.
bool ReplayThread::step(const trace::Event& ev, uint64_t event_no, Tools& t, int64_t start) {
  using F = trace::Family;
  using Op = trace::OpClass;
  using Top = bool (ReplayThread::*)(const trace::Event&, uint64_t, Tools&, int64_t);
  static constexpr auto kTop = kind_table<Top>({
      {F::posix, std::nullopt, &ReplayThread::top_io},
      {F::stdio, std::nullopt, &ReplayThread::top_io},
      {F::aio, std::nullopt, &ReplayThread::top_io},
      {F::mmap, std::nullopt, &ReplayThread::top_io},
      {F::mpiio, std::nullopt, &ReplayThread::top_mpiio},
      {F::mpi, std::nullopt, &ReplayThread::top_mpi},
      {F::mpi, Op::init, &ReplayThread::top_init},
      {F::internal, Op::complete, &ReplayThread::top_record},
      {F::internal, Op::member, &ReplayThread::top_record},
      {F::internal, Op::topology, &ReplayThread::top_record},
      {F::internal, Op::mpiio_block, &ReplayThread::top_mpiio},  // a view's block counts as MPI-IO
  });
  static_assert(every_kind_handled(kTop), "a kind of trace/api/*.list has no depth-0 replay handler: register one");
  ++summary.events;
  done->n.store(summary.events, std::memory_order_relaxed);
  if (budget > 0) {
    pending_ = ev;
    pending_start_ = start;
    recording_ = true;
  }
  cur_ = {true, ev.op() == Op::wait || ev.op() == Op::test, ev.kind, start, 0};
  bool file_call = trace::is_io(ev.kind) || trace::is_mpiio(ev.kind);
  acct_ = {.open = true, .io = file_call, .start = start, .waits_are_io = trace::is_mpiio(ev.kind)};
  (file_call                ? summary.traced_io_ns
   : trace::is_mpi(ev.kind) ? summary.traced_mpi_ns
                            : summary.traced_compute_ns) += ev.dur_ns;
  begin_file_call(ev, event_no, t.mpi.native_mpiio());
  return (this->*kTop[size_t(ev.kind)])(ev, event_no, t, start);
}

// The handler of each kind nested under a call (replay_step.cpp).
bool ReplayThread::nested(const trace::Event& ev, uint64_t delivered, Tools& t) {
  using F = trace::Family;
  using Op = trace::OpClass;
  using Sub = bool (ReplayThread::*)(const trace::Event&, uint64_t, Tools&);
  static constexpr auto kSub = kind_table<Sub>({
      {F::posix, std::nullopt, &ReplayThread::sub_file},
      {F::stdio, std::nullopt, &ReplayThread::sub_file},
      {F::mmap, std::nullopt, &ReplayThread::sub_file},
      {F::aio, std::nullopt, &ReplayThread::sub_aio},
      {F::mpi, std::nullopt, &ReplayThread::sub_ignored},
      {F::mpiio, std::nullopt, &ReplayThread::sub_ignored},
      {F::internal, Op::complete, &ReplayThread::sub_complete},
      {F::internal, Op::member, &ReplayThread::sub_member},
      {F::internal, Op::topology, &ReplayThread::sub_topology},
      {F::internal, Op::mpiio_block, &ReplayThread::sub_block},
  });
  static_assert(every_kind_handled(kSub), "a kind of trace/api/*.list has no nested replay handler: register one");
  return (this->*kSub[size_t(ev.kind)])(ev, delivered, t);
}

namespace {

struct ThreadSpec {
  const trace::Stream* stream;
  int32_t rank;
};

std::vector<ThreadSpec> thread_specs(const trace::Plan& plan, const Backend* backend) {
  std::vector<ThreadSpec> out;
  for (const trace::Stream& s : plan.streams)
    for (int64_t r : s.rank_list())
      if (!backend || backend->replays(int32_t(r))) out.push_back({&s, int32_t(r)});
  return out;
}

Report collect(const trace::Plan& plan, const ReplayOptions& opt, const Target& target, Shared& sh,
               const std::vector<std::unique_ptr<ReplayThread>>& threads, int64_t t0) {
  Report rep;
  rep.plan = opt.plan_name;
  rep.fs = opt.setup.fs;
  rep.ranks = int32_t(plan.ranks.size());
  rep.threads = threads.size();
  for (const trace::PlanRank& r : plan.ranks) rep.cpu_wait_ns += r.cpu_wait_ns;
  int64_t last = t0;
  for (const auto& t : threads) {
    rep.traced_ns = std::max(rep.traced_ns, t->summary.traced_ns);
    last = std::max(last, t->end_ns);
    rep.replay_ns = std::max(rep.replay_ns, t->summary.replay_ns);
    rep.per_thread.push_back(t->summary);
    rep.skipped += t->skipped;
    for (const auto& [kind, stats] : t->ops.entries()) rep.ops[std::string(trace::name(kind))].merge(stats);
  }
  if (opt.record_calls > 0)
    for (const auto& t : threads) rep.calls.push_back(std::move(t->calls));
  std::sort(rep.calls.begin(), rep.calls.end(),
            [](const auto& a, const auto& b) { return std::tie(a.rank, a.thread) < std::tie(b.rank, b.thread); });
  std::sort(rep.per_thread.begin(), rep.per_thread.end(),
            [](const auto& a, const auto& b) { return std::tie(a.rank, a.thread) < std::tie(b.rank, b.thread); });
  rep.wall_ns = last - t0;
  rep.errors = sh.errors.count();
  rep.first_errors = sh.errors.first();
  rep.warnings = target.warnings;
  if (std::string w = opt.io_only ? "" : pruned_time_warning(plan); !w.empty()) rep.warnings.push_back(w);
  rep.comm_costs = sh.costs.to_json();
  return rep;
}

std::string io_log_text(const std::vector<std::unique_ptr<ReplayThread>>& threads) {
  std::vector<const ReplayThread*> order;
  for (const auto& t : threads) order.push_back(t.get());
  std::sort(order.begin(), order.end(), [](const ReplayThread* a, const ReplayThread* b) {
    return std::tie(a->summary.rank, a->summary.thread) < std::tie(b->summary.rank, b->summary.thread);
  });
  std::string text;
  for (const ReplayThread* t : order)
    text += "== rank " + std::to_string(t->summary.rank) + " thread " + std::to_string(t->summary.thread) + "\n" +
            t->io_lines;
  return text;
}

// Events replayed so far against the traced time: the replay aims at it.
report::ProgressBar::View replay_view(const EventCount* done, size_t n, int64_t traced_ns,
                                      const std::atomic<int64_t>& t0) {
  int64_t start = t0.load(std::memory_order_acquire);
  if (start == 0) return {-1, "mpior-replay: preparing the target and starting threads"};
  uint64_t events = 0;
  for (size_t i = 0; i < n; ++i) events += done[i].n.load(std::memory_order_relaxed);
  double s = double(std::max<int64_t>(1, mono_now_ns() - start)) / 1e9, traced = double(traced_ns) / 1e9;
  double left = std::max(0.0, traced - s);
  return {traced > 0 ? std::min(0.99, s / traced) : -1,
          fmt::format("mpior-replay: {} events, {:.0f} ev/s, ETA {:.0f} s", events, double(events) / s, left)};
}

// Every replayed file against the size the plan gives it (MPI mode: on
// process 0, with every process's logs).
SizeCheck check_sizes(const trace::Plan& plan, const ReplayOptions& opt, const Target& target,
                      const std::vector<std::unique_ptr<ReplayThread>>& threads) {
  std::vector<const SizeLog*> logs;
  for (const auto& t : threads) logs.push_back(&t->sizes);
  if (!opt.backend) return check_final_sizes(plan, target, logs);
  std::vector<SizeLog> all = opt.backend->gather_size_logs(logs);
  if (all.empty()) return {};
  logs.clear();
  for (const SizeLog& l : all) logs.push_back(&l);
  return check_final_sizes(plan, target, logs);
}

// The replay threads, started on their CPUs and stacks; stops at the first
// that cannot start (`error`, errno), the ones before it running.
struct Started {
  std::vector<std::unique_ptr<ReplayThread>> threads;
  std::vector<pthread_t> ids;
  int error = 0;
};
Started start_threads(Shared& sh, const std::vector<ThreadSpec>& specs, const ThreadPlacement& placement,
                      const ThreadStacks& stacks, EventCount* done) {
  const ReplayOptions& opt = sh.opt;
  Started st;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, std::max<size_t>(opt.stack_bytes, size_t(PTHREAD_STACK_MIN)));
  for (const ThreadSpec& s : specs) {
    size_t i = st.threads.size();
    if (placement.bound()) pthread_attr_setaffinity_np(&attr, sizeof(cpu_set_t), &placement.sets[i]);
    stacks.use(attr, i);
    st.threads.push_back(std::make_unique<ReplayThread>(sh, *s.stream, s.rank));
    ReplayThread& t = *st.threads.back();
    t.done = &done[i];
    t.order_slot = sh.order->slot(i);
    if (opt.record_calls > 0) t.budget = std::max<uint64_t>(1, opt.record_calls / specs.size());
    pthread_t id;
    st.error = pthread_create(&id, &attr, &ReplayThread::entry, &t);
    if (st.error != 0) {
      st.threads.pop_back();
      break;
    }
    st.ids.push_back(id);
  }
  pthread_attr_destroy(&attr);
  return st;
}

}  // namespace

Report replay_plan(const trace::Plan& plan, const ReplayOptions& opt) {
  start_clock();
  int64_t launch = mono_now_ns(), launch_cpu = StartGate::process_cpu_ns();
  validate_plan(plan, opt.plan_name);
  std::unique_ptr<Target> target;
  if (opt.backend)
    opt.backend->in_turn([&] { target = prepare_target(plan, opt.setup); });
  else
    target = prepare_target(plan, opt.setup);
  std::vector<ThreadSpec> specs = thread_specs(plan, opt.backend);
  Shared sh(plan, *target, opt, uint32_t(specs.size()));
  std::vector<FileOrder::Thread> order_threads;
  for (const ThreadSpec& s : specs) order_threads.push_back({s.stream, s.rank});
  FileOrder order(plan, order_threads, opt.cursor);
  sh.order = &order;
  std::unique_ptr<EventCount[]> done(new EventCount[specs.size()]);
  std::atomic<int64_t> started{0};
  int64_t traced_ns = 0;
  for (const trace::PlanRank& r : plan.ranks) traced_ns = std::max(traced_ns, r.traced_ns);
  report::ProgressBar bar(opt.progress,
                          [&](double) { return replay_view(done.get(), specs.size(), traced_ns, started); });
  std::vector<int32_t> thread_ranks;
  for (const ThreadSpec& s : specs) thread_ranks.push_back(s.rank);
  const ThreadPlacement placement = place_threads(plan, thread_ranks, opt.bind, opt.backend != nullptr);
  const ThreadStacks stacks(specs.size(), opt.stack_bytes);  // outlives the threads: joined below
  Started st = start_threads(sh, specs, placement, stacks, done.get());
  std::vector<std::unique_ptr<ReplayThread>>& threads = st.threads;
  const std::vector<pthread_t>& ids = st.ids;
  int create_error = st.error;
  int64_t t0 = sh.gate.open_when_ready(uint32_t(ids.size()), create_error == 0 ? opt.backend : nullptr);
  started.store(t0, std::memory_order_release);
  for (pthread_t id : ids) pthread_join(id, nullptr);
  bar.stop();
  if (sh.progress.is_aborted()) throw ToolError(sh.progress.reason());
  Report rep = collect(plan, opt, *target, sh, threads, t0);
  if (!opt.io_log.empty()) {
    rep.io_log = io_log_text(threads);
    if (!opt.backend) write_io_log(opt.io_log, rep.io_log);  // MPI mode: rank 0 writes every process's
  }
  rep.setup_ns = sh.gate.ready_at() - launch;  // setup, then until every thread runs
  rep.setup_cpu_ns = sh.gate.ready_cpu_ns() - launch_cpu;
  rep.sizes = check_sizes(plan, opt, *target, threads);
  rep.placement = placement.text;
  return rep;
}

}  // namespace mpior::replay
