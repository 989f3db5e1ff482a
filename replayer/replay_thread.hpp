// One replay thread (engine.cpp walks its events and hands each to its
// family's handler, replay_step.cpp; replay_thread_mpi.cpp its MPI calls:
// what they cost beyond waiting) and what every thread shares.
#pragma once

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

#include "replayer/backend.hpp"
#include "replayer/comm_cost.hpp"
#include "replayer/engine.hpp"
#include "replayer/file_order.hpp"
#include "replayer/final_sizes.hpp"
#include "replayer/init_gate.hpp"
#include "replayer/io_replay.hpp"
#include "replayer/mpi_replay.hpp"
#include "replayer/mpiio_replay.hpp"
#include "replayer/pacing_clock.hpp"
#include "replayer/start_gate.hpp"
#include "replayer/sync.hpp"
#include "report/progress.hpp"
#include "trace/arg_views.hpp"
#include "trace/tool_error.hpp"

namespace mpior::replay {

// ThreadSanitizer models one descriptor table per process: with tables
// unshared, two threads' unrelated descriptor 8 read to it as one, raced on.
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
#else
inline constexpr bool kThreadSanitizer = false;
#endif

// A thread's count of replayed events, for the progress bar: a cache line
// each, so that threads counting every event do not pass one line between
// their cores.
struct alignas(64) EventCount {
  std::atomic<uint64_t> n{0};
};

struct Shared {
  Shared(const trace::Plan& p, const Target& t, const ReplayOptions& o, uint32_t threads)
      : plan(p),
        target(t),
        opt(o),
        progress(threads, o.stall_timeout_s),
        mpi(p, progress, o.backend ? std::max(threads, o.backend->node_threads()) : threads),
        costs(o.io_only ? CommCosts() : CommCosts(p)),  // MPI mode: for the calls pruning emptied
        init(p),
        private_fds(!o.backend && !plan_uses_aio(p) && !kThreadSanitizer),
        cpu_wait_read(threads <= uint32_t(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)))) {}
  // When rank r's trace started after the earliest rank's (--io-only and MPI
  // mode: the ranks start together).
  int64_t start_of(int32_t rank) const { return opt.io_only || opt.backend ? 0 : plan.ranks[size_t(rank)].start_ns; }
  const trace::Plan& plan;
  const Target& target;
  const ReplayOptions& opt;
  Progress progress;
  MpiWorld mpi;
  CommCosts costs;  // what MPI calls cost beyond waiting, from the plan's timings
  ErrorLog errors;
  StartGate gate;
  SharedPointers pointers;
  InitGate init;               // start-up: threads replaying MPI_Init meet
  FileOrder* order = nullptr;  // names a rank's threads hand each other
  bool private_fds;            // each replay thread unshares its descriptor table
  // The threads' own waits for a CPU are read where they fit the CPUs (more
  // wait for each other, as oversubscribed ranks do; the tracer leaves those in).
  bool cpu_wait_read;
};

// A cache line of its own at each end: threads write their summaries and pacers
// every event, and objects allocated one after the other would share lines.
class alignas(64) ReplayThread {
 public:
  ReplayThread(Shared& sh, const trace::Stream& stream, int32_t rank)
      : sh_(sh), stream_(stream), who_("rank " + std::to_string(rank) + " thread " + std::to_string(stream.thread)) {
    summary.rank = rank;
    summary.thread = stream.thread;
    summary.traced_ns = sh.plan.ranks[size_t(rank)].traced_ns + sh.start_of(rank);
    calls.rank = rank;
    calls.thread = stream.thread;
  }

  static void* entry(void* self) {
    static_cast<ReplayThread*>(self)->run_guarded();
    return nullptr;
  }

  ThreadSummary summary;
  OpTable ops;
  EventCount* done = nullptr;  // depth-0 events replayed, for the progress bar
  ThreadCalls calls;           // --timeline / --html
  uint64_t budget = 0;         // calls to keep
  std::string io_lines;        // --io-log: "kind path offset count [start dur traced_dur]", one per file call
  uint64_t skipped = 0;
  int64_t end_ns = 0;
  int order_slot = -1;  // in sh.order: -1 when the rank has no other thread
  SizeLog sizes;        // the replayed calls that change files' sizes (final_sizes.hpp)

 private:
  // What a thread replays with (run makes them).
  struct Tools {
    IoReplay& io;
    MpiOps& mpi;
    MpiioReplay& mio;
  };
  // A depth-0 event being replayed: completion records under a Wait extend it.
  struct Current {
    bool active = false;
    bool waits = false;
    trace::Kind kind{};
    int64_t start = 0;
    int64_t bytes = 0;
  };
  // Where the current depth-0 call's time goes (ThreadSummary's breakdown).
  struct Account {
    bool open = false;
    bool io = false;
    int64_t start = 0, waited = 0, charged = 0;
    int64_t own = 0;  // the replay's own time around the file call (pay_dispatch)
    // An MPI-IO call's waits for the other ranks are its own time, as the
    // traced call's duration (time.io_s) held them: ROMIO synchronises inside.
    bool waits_are_io = false;
  };
  void close_account(int64_t end) {
    if (!acct_.open) return;
    acct_.open = false;
    int64_t rest = std::max<int64_t>(0, end - acct_.start - acct_.waited - acct_.charged - acct_.own);
    summary.compute_ns += acct_.own;
    (acct_.waits_are_io ? summary.io_ns : summary.wait_ns) += acct_.waited;
    // An MPI-IO call's charged cost is ROMIO's own time, I/O as traced.
    (acct_.waits_are_io ? summary.io_ns : summary.comm_ns) += acct_.charged;
    summary.charged_ns += acct_.charged;
    (acct_.io ? summary.io_ns : summary.comm_ns) += rest;
  }
  // Sleeps a calibrated cost (or a floor) from `from`; returns when it woke.
  int64_t charge(int64_t from, int64_t cost) {
    int64_t deadline = pacer_.deadline_after(from, cost);
    int64_t woke = sleep_until(deadline, sh_.progress.aborted());
    pacer_.woke_at(deadline, woke);
    acct_.charged += woke - from;
    return woke;
  }
  // A call's calibrated cost, counted whole wherever the plan applies one,
  // however much of it is then slept: the same in every replay of the plan.
  void count_cost(int64_t cost) {
    summary.costs_ns += cost;
    summary.costed_calls += cost > 0;
  }
  void settle_agreement(const trace::Event* next, MpiOps& mpi);  // replay_thread_mpi.cpp
  // A call's calibrated cost after its synchronisation (replay_thread_mpi.cpp).
  void charge_after_sync(int64_t cost);
  // A Wait/Test's cost, owed until its completions ran (MPI mode: only when
  // every one stayed within this process).
  void pay_owed(MpiOps& mpi, bool after_sync);
  // Waiting for partners, measured around a synchronisation.
  template <class F>
  bool waiting(F&& sync) {
    int64_t t = mono_now_ns();
    set_lateness(pacer_.debt(), last_end_);
    bool going = sync();
    last_end_ = mono_now_ns();
    acct_.waited += last_end_ - t;
    if (int64_t lateness = lateness_after_sync(); lateness >= 0) pacer_.set_debt(lateness);
    return going;
  }
  bool mpi_call(const trace::Event& ev, uint64_t event_no, MpiOps& mpi, int64_t start);
  // A file call began at `start`, ended at r.end_ns (the one reading after
  // it), r.call_ns of it in the real calls and acct_.waited waiting for
  // another thread's change of a name: the rest is the replay's own (taking
  // the event, its bookkeeping, mapping the path), debt the next gaps pay
  // (for a small fwrite or a stat on tmpfs, about as long as the call). It is
  // not I/O: the traced I/O time holds the calls alone, the tracer's own time
  // left out; it stands in for part of the traced gap it is paid from, so it
  // counts as compute. With --io-only there are no gaps to pay it from: it is
  // only reported, what the replay adds to an event beyond its calls.
  void pay_dispatch(int64_t start, const IoOutcome& r) {
    last_end_ = r.end_ns;
    int64_t own = std::max<int64_t>(0, r.end_ns - start - r.call_ns - acct_.waited);
    summary.own_ns += own;
    acct_.own += own;
    if (!sh_.opt.io_only) pacer_.add_debt(own);
  }

  void run_guarded() {
    tighten_timer_slack();
    // A rank's descriptors are its own, as in the traced process; unshared,
    // the kernel looks them up without reference counting, on every call.
    // Not in MPI mode (the MPI library's threads share descriptors) nor with
    // POSIX AIO (glibc's helper threads serve every thread's requests).
    if (sh_.private_fds) (void)unshare(CLONE_FILES);
    try {
      run();
    } catch (const std::exception& e) {
      if (sh_.opt.backend) sh_.opt.backend->fatal(who_ + ": " + e.what());
      sh_.progress.abort(who_ + ": " + e.what());
      if (!arrived_) sh_.gate.arrive();  // main waits for every thread at the gate
      end_ns = mono_now_ns();
    }
    if (sh_.order) sh_.order->finished(order_slot);
    sh_.progress.thread_done();
  }

  void run();
  void wind_up(Tools& t, bool going, int64_t cpu_wait0);
  // A receive a Wait/Test completed: where the message's arrow ends.
  void record_completion(const trace::Event& ev) {
    if (calls.calls.size() + 1 < budget)  // room left for the Wait/Test itself
      calls.calls.push_back({ev, last_end_ - t0_, last_end_ - t0_});
    else
      calls.capped = true;
  }
  // --io-log's line of a file call that ran from start to end (--io-log-times adds them).
  void log_io(const trace::Event& ev, int64_t start, int64_t end) {
    const trace::PlanRank& r = sh_.plan.ranks[size_t(summary.rank)];
    int64_t local = io_args(ev).file();
    std::string path = local >= 0 && size_t(local) < r.files.size()
                           ? sh_.plan.files[size_t(r.files[size_t(local)])].path
                           : std::string("-");
    io_lines += fmt::format("{} {} {} {}", trace::name(ev.kind), path, io_args(ev).offset(), io_args(ev).count());
    if (sh_.opt.io_log_times) io_lines += fmt::format(" {} {} {}", start - t0_, end - start, ev.dur_ns);
    io_lines += '\n';
  }
  // Before a call naming a file: the other threads' changes of the name
  // that came first in the trace (file_order.hpp); the wait is waiting.
  int64_t keep_file_order(const trace::Event& ev, int64_t woke) {
    constexpr int64_t kBoundNs = 30'000'000'000;  // a thread that went another way than traced
    if (order_slot < 0 || !FileOrder::orders(ev) ||
        !sh_.order->wait_before(order_slot, ev, sh_.progress.aborted(), kBoundNs))
      return woke;
    int64_t now = mono_now_ns();
    summary.wait_ns += now - woke;
    return now;
  }
  // A file call whose name another thread of the rank makes or removes: a
  // failure the name explains waits for that thread's next change of it and
  // tries again (file_order.hpp); the wait is waiting.
  IoOutcome replay_io(const trace::Event& ev, IoReplay& io);

  // A depth-0 call: its accounting, then its family's handler (replay_step.cpp)
  // through the table in step (engine.cpp). False: the thread stops.
  bool step(const trace::Event& ev, uint64_t event_no, Tools& t, int64_t start);
  // A record nested under a call (`delivered`: the cursor's count, MpiOps's
  // event number): its family's handler through the table in nested.
  bool nested(const trace::Event& ev, uint64_t delivered, Tools& t);
  bool top_io(const trace::Event& ev, uint64_t event_no, Tools& t, int64_t start);
  bool top_mpiio(const trace::Event& ev, uint64_t event_no, Tools& t, int64_t start);
  bool top_init(const trace::Event& ev, uint64_t event_no, Tools& t, int64_t start);
  bool top_mpi(const trace::Event& ev, uint64_t event_no, Tools& t, int64_t start);
  bool top_record(const trace::Event& ev, uint64_t event_no, Tools& t, int64_t start);
  bool sub_complete(const trace::Event& ev, uint64_t delivered, Tools& t);
  bool sub_member(const trace::Event& ev, uint64_t delivered, Tools& t);
  bool sub_topology(const trace::Event& ev, uint64_t delivered, Tools& t);
  bool sub_block(const trace::Event& ev, uint64_t delivered, Tools& t);
  bool sub_aio(const trace::Event& ev, uint64_t delivered, Tools& t);
  bool sub_file(const trace::Event& ev, uint64_t delivered, Tools& t);
  bool sub_ignored(const trace::Event& ev, uint64_t delivered, Tools& t);
  void begin_file_call(const trace::Event& ev, uint64_t event_no, bool native);
  bool nested_io(const trace::Event& ev, IoReplay& io, MpiOps& mpi);
  bool syncs_world(const trace::Event& ev) const;
  bool release_open(MpiOps& mpi) {
    fscope_.open_pending = fscope_.creating = false;
    return mpi.file_barrier(fscope_.call, fscope_.event_no);
  }
  // The end of a call that synchronises after its file system work
  // (syncs_after): the ranks meet again once each did its part.
  bool release_after(MpiOps& mpi, IoReplay& io) {
    fscope_.sync_after = false;
    io.sizes().synced(io.global_file(io_args(fscope_.call).file()));
    return waiting([&] { return mpi.file_barrier(fscope_.call, fscope_.event_no); });
  }
  void finish(int64_t end) {
    if (cur_.active) ops.add(cur_.kind, end - cur_.start, cur_.bytes);
    cur_.active = false;
    if (!recording_) return;
    recording_ = false;
    if (calls.calls.size() < budget)
      calls.calls.push_back({pending_, pending_start_ - t0_, std::max(end, pending_start_) - t0_});
    else
      calls.capped = true;
  }

  // The POSIX calls ROMIO made under an MPI-IO call (or under the Wait that
  // completed a nonblocking one) are replayed as the file system saw them. A
  // collective open lets the others open only after the creating rank
  // created the file (ROMIO: create on one rank, then broadcast).
  struct FileScope {
    bool nested_io = false;
    bool open_pending = false;  // the open's barrier is still to come
    bool creating = false;      // this rank creates the file in it
    bool sync_after = false;    // the ranks meet at the call's end (syncs_after)
    int64_t file = -1;
    trace::Event call;
    uint64_t event_no = 0;
  };

  Shared& sh_;
  const trace::Stream& stream_;
  std::string who_;
  Current cur_;
  FileScope fscope_;
  trace::Event pending_;  // the call being replayed, for `calls`
  int64_t pending_start_ = 0, t0_ = 0;
  bool recording_ = false;
  int64_t last_end_ = 0;
  bool arrived_ = false;
  bool met_init_ = false;
  Pacer pacer_{0, 1.0};
  Account acct_;
  int64_t owed_ = 0;        // a Wait/Test's cost, charged after its completions
  int64_t traced_end_ = 0;  // where the last depth-0 event ended when traced
};

}  // namespace mpior::replay
