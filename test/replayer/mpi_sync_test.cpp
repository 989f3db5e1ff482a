#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "replayer/engine.hpp"
#include "replayer/sync.hpp"
#include "test/replayer/plan_maker.hpp"
#include "trace/tool_error.hpp"

using namespace mpior::replay;
using namespace mpior::replay::testing;
using mpior::trace::Kind;
namespace trace = mpior::trace;

namespace {

ReplayOptions options(const std::string& root, double stall_s = 20) {
  ReplayOptions opt;
  opt.setup.fs = root;
  opt.stall_timeout_s = stall_s;
  opt.plan_name = "mpi-plan";
  return opt;
}

constexpr int32_t kRanks = 4;
constexpr int64_t kLateSend = 50'000'000;  // rank 0 computes 50 ms before its first send

// Every MPI opclass, on MPI_COMM_WORLD and on a split communicator (local id
// 1 on every rank: evens or odds).
trace::Stream mpi_stream(int32_t r) {
  int64_t next = (r + 1) % kRanks, prev = (r + kRanks - 1) % kRanks;
  StreamMaker sm;
  sm.call(Kind::MPI_Init, mpi_args(0), 0, 1000);
  sm.call(Kind::MPI_Send, mpi_args(0, next, 5, 100), 0, r == 0 ? kLateSend : 0);
  if (r == 1)  // MPI_ANY_SOURCE / MPI_ANY_TAG: the status says who it was
    sm.call(Kind::MPI_Recv, mpi_args(0, trace::kAnySource, trace::kAnyTag, 100, 0, 0, prev, 5));
  else
    sm.call(Kind::MPI_Recv, mpi_args(0, prev, 5, 100, 0, 0, prev, 5));
  sm.call(Kind::MPI_Barrier, mpi_args(0));
  sm.call(Kind::MPI_Irecv, mpi_args(0, prev, 6, 64, 0, 1));
  sm.call(Kind::MPI_Isend, mpi_args(0, next, 6, 64, 0, 2));
  sm.call(Kind::MPI_Waitall, mpi_args(0), 0, 10, 1000);
  sm.nested(Kind::mpior_complete, mpi_args(0, prev, 6, 64, trace::kReqRecv, 1, prev, 6));
  sm.nested(Kind::mpior_complete, mpi_args(0, next, 6, 64, trace::kReqSend, 2));
  sm.call(Kind::MPI_Test, mpi_args(0));  // completed nothing
  sm.call(Kind::MPI_Sendrecv, mpi_args(0, next, 7, 8, prev, 7, prev, 7));
  sm.call(Kind::MPI_Bcast, mpi_args(0, 0, 0, 1024, 0));
  sm.call(Kind::MPI_Reduce, mpi_args(0, 0, 0, 8, 2));
  sm.call(Kind::MPI_Gather, mpi_args(0, 0, 0, 8, 3));
  sm.call(Kind::MPI_Scatter, mpi_args(0, 0, 0, 8, 1));
  sm.call(Kind::MPI_Allreduce, mpi_args(0, 0, 0, 8));
  sm.call(Kind::MPI_Comm_split, mpi_args(0, 0, 0, 0, 0, 1));
  sm.call(Kind::MPI_Barrier, mpi_args(1));
  sm.call(Kind::MPI_Bcast, mpi_args(1, 0, 0, 16, 1));  // root: comm rank 1 of the split
  sm.call(Kind::MPI_Send, mpi_args(0, trace::kProcNull, 1, 0));
  sm.call(Kind::MPI_Comm_free, mpi_args(1));
  sm.call(Kind::MPI_Finalize, mpi_args(0));
  return sm.stream(r);
}

PlanMaker mpi_plan() {
  PlanMaker pm(kRanks, 60'000'000);
  pm.plan.comms.push_back({{0, 2}});
  pm.plan.comms.push_back({{1, 3}});
  for (int32_t r = 0; r < kRanks; ++r) {
    pm.plan.ranks[size_t(r)].comms = {0, r % 2 == 0 ? 1 : 2};
    pm.add(mpi_stream(r));
  }
  return pm;
}

std::string replay_error(const trace::Plan& plan, const ReplayOptions& opt) {
  try {
    replay_plan(plan, opt);
  } catch (const mpior::ToolError& e) {
    return e.what();
  }
  return "completed";
}

}  // namespace

TEST_CASE("a plan with sends, receives, requests and collectives replays to the end", "[mpi]") {
  TempDir tmp;
  PlanMaker pm = mpi_plan();
  Report rep = replay_plan(pm.plan, options(tmp / "fs"));
  REQUIRE(rep.errors == 0);
  REQUIRE(rep.first_errors.empty());
  REQUIRE(rep.threads == kRanks);
  REQUIRE(rep.ops.at("MPI_Send").count == 2 * kRanks);
  REQUIRE(rep.ops.at("MPI_Send").bytes == 100 * kRanks);
  REQUIRE(rep.ops.at("MPI_Waitall").count == kRanks);
  REQUIRE(rep.ops.at("MPI_Barrier").count == 2 * kRanks);
  REQUIRE(rep.ops.at("MPI_Finalize").count == kRanks);
  REQUIRE(rep.ops.count("mpior_complete") == 0);  // part of the Waitall, not an operation of its own
  // Rank 1 cannot get past its receive before rank 0 has sent, 50 ms in.
  REQUIRE(rep.per_thread.at(1).rank == 1);
  REQUIRE(rep.per_thread.at(1).replay_ns >= kLateSend);
  REQUIRE(rep.ops.at("MPI_Recv").max_ns > 0);
}

TEST_CASE("a receive whose message never comes stops the replay with the stall message", "[mpi]") {
  TempDir tmp;
  PlanMaker pm(2);
  StreamMaker r0, r1;
  r0.call(Kind::MPI_Recv, mpi_args(0, 1, 9, 4, 0, 0, 1, 9));
  r1.call(Kind::write, io_args(1, 1, -1, 3), 3);
  pm.add(r0.stream(0));
  pm.add(r1.stream(1));
  std::string msg = replay_error(pm.plan, options(tmp / "fs", 0.3));
  REQUIRE_THAT(msg, Catch::Contains("rank 0 thread 0") && Catch::Contains("MPI_Recv") &&
                        Catch::Contains("channel global comm 0 src 1 -> dst 0 tag 9"));
}

TEST_CASE("a nonblocking receive that never completes stalls at its Wait", "[mpi]") {
  TempDir tmp;
  PlanMaker pm(2);
  StreamMaker r0, r1;
  r0.call(Kind::MPI_Irecv, mpi_args(0, 1, 3, 4, 0, 1));
  r0.call(Kind::MPI_Wait, mpi_args(0));
  r0.nested(Kind::mpior_complete, mpi_args(0, 1, 3, 4, trace::kReqRecv, 1, 1, 3));
  r1.call(Kind::MPI_Barrier, mpi_args(1));  // on a communicator the plan left unresolved: logged, not waited
  pm.plan.ranks[1].comms = {0, -1};
  pm.add(r0.stream(0));
  pm.add(r1.stream(1));
  std::string msg = replay_error(pm.plan, options(tmp / "fs", 0.3));
  REQUIRE_THAT(msg, Catch::Contains("mpior_complete") && Catch::Contains("channel global comm 0 src 1 -> dst 0 tag 3"));
}

TEST_CASE("a collective some member never reaches stalls instead of hanging", "[mpi]") {
  TempDir tmp;
  PlanMaker pm(3);
  StreamMaker r0, r1, r2;
  r0.call(Kind::MPI_Barrier, mpi_args(0));
  r1.call(Kind::MPI_Barrier, mpi_args(0));
  r2.call(Kind::write, io_args(1, 1, -1, 1), 1);
  pm.add(r0.stream(0));
  pm.add(r1.stream(1));
  pm.add(r2.stream(2));
  std::string msg = replay_error(pm.plan, options(tmp / "fs", 0.3));
  REQUIRE_THAT(msg, Catch::Contains("MPI_Barrier") && Catch::Contains("2 of 3 members arrived"));
}

TEST_CASE("channels count messages; a lone waiter with nobody running is a stall", "[mpi]") {
  Progress progress(1, 0.2);
  Channels ch(progress, 1);
  ChannelKey k{0, 1, 0, 4};
  for (int i = 0; i < 3; ++i) ch.post(k);
  for (int i = 0; i < 3; ++i) REQUIRE(ch.wait(k, "t") == WaitResult::ok);
  REQUIRE(ch.wait(k, "the waiter") == WaitResult::stalled);
  REQUIRE(progress.is_aborted());
  REQUIRE_THAT(progress.reason(), Catch::Contains("the waiter") && Catch::Contains(describe(k)));
  REQUIRE(ch.wait(k, "after") == WaitResult::aborted);
}

TEST_CASE("a receive polls its channel before it sleeps, as MPI polls", "[mpi]") {
  Progress progress(1, 60);
  Channels ch(progress, 1);  // one thread: it has a core, so it polls
  ChannelKey k{0, 1, 0, 4};
  std::atomic<int> got{-1};
  std::thread receiver([&] { got = int(ch.wait(k, "receiver")); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // Asleep, the receiver would count as blocked and the replay as stalled.
  REQUIRE(!progress.stalled(progress.ticks()));
  ch.post(k);
  receiver.join();
  REQUIRE(got == int(WaitResult::ok));
}

TEST_CASE("a stall names every blocked thread and what it waits for", "[mpi]") {
  Progress progress(3, 0.2);
  Channels ch(progress, 3);
  CommBarrier barrier(3);
  progress.set_waker([&] {
    ch.wake_all();
    barrier.wake_all();
  });
  ChannelKey a{0, 1, 0, 4}, b{0, 0, 1, 5};
  std::thread t1([&] { ch.wait(a, "rank 0 thread 0 at event #3 (MPI_Recv)"); });
  std::thread t2([&] { ch.wait(b, "rank 1 thread 0 at event #7 (MPI_Wait)"); });
  std::thread t3([&] { barrier.wait(progress, "rank 2 thread 0 at event #2 (MPI_Barrier)"); });
  t1.join();
  t2.join();
  t3.join();
  REQUIRE(progress.is_aborted());
  std::string why = progress.reason();
  REQUIRE_THAT(why, Catch::Contains("blocked threads (3)") &&
                        Catch::Contains("rank 0 thread 0 at event #3 (MPI_Recv) waits on " + describe(a)) &&
                        Catch::Contains("rank 1 thread 0 at event #7 (MPI_Wait) waits on " + describe(b)) &&
                        Catch::Contains("rank 2 thread 0 at event #2 (MPI_Barrier) waits on a collective"));
}

TEST_CASE("a waiter is not declared stalled while another thread is still running", "[mpi]") {
  Progress progress(2, 0.1);
  Channels ch(progress, 2);
  ChannelKey k{0, 1, 0, 0};
  std::thread sender([&] {
    // Busy (not waiting) for several stall timeouts, then sends.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ch.post(k);
    progress.thread_done();
  });
  REQUIRE(ch.wait(k, "receiver") == WaitResult::ok);
  sender.join();
  REQUIRE(!progress.is_aborted());
}

TEST_CASE("an abort releases threads blocked on semaphores and barriers", "[mpi]") {
  Progress progress(3, 60);
  Channels ch(progress, 3);
  CommBarrier barrier(3);
  progress.set_waker([&] {
    ch.wake_all();
    barrier.wake_all();
  });
  WaitResult sem_result = WaitResult::ok, barrier_result = WaitResult::ok;
  std::thread a([&] { sem_result = ch.wait({0, 1, 0, 0}, "a"); });
  std::thread b([&] { barrier_result = barrier.wait(progress, "b"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  progress.abort("stop");
  a.join();
  b.join();
  REQUIRE(sem_result == WaitResult::aborted);
  REQUIRE(barrier_result == WaitResult::aborted);
  REQUIRE(progress.reason() == "stop");
  progress.set_waker({});
}

namespace {
constexpr int64_t kLate = 80'000'000;  // 80 ms of compute before the late rank's collective

// The replay time of each rank of a plan.
std::vector<int64_t> replay_times(const trace::Plan& plan, const std::string& fs) {
  Report rep = replay_plan(plan, options(fs));
  REQUIRE(rep.errors == 0);
  std::vector<int64_t> t(plan.ranks.size());
  for (const auto& th : rep.per_thread) t[size_t(th.rank)] = th.replay_ns;
  return t;
}
}  // namespace

TEST_CASE("a neighbourhood collective waits for its in-neighbours only", "[mpi]") {
  // A distributed graph on world: 0 -> 1 -> 2, rank 3 isolated. Rank 0
  // computes 80 ms first: rank 1 (its out-neighbour) waits for it; rank 2
  // only for rank 1's arrival (one exchange: no transitive wait), rank 3 for
  // nobody; a whole-communicator meeting would hold all.
  TempDir tmp;
  PlanMaker pm(4);
  int64_t g = pm.comm({0, 1, 2, 3});
  for (int32_t r = 0; r < 4; ++r) {
    StreamMaker sm;
    sm.call(Kind::MPI_Dist_graph_create_adjacent, mpi_args(0, 0, 0, 0, 0, g));
    if (r > 0 && r < 3) sm.nested(Kind::mpior_neighbor, mpi_args(g, r - 1, trace::kNeighborIn));
    if (r < 2) sm.nested(Kind::mpior_neighbor, mpi_args(g, r + 1, trace::kNeighborOut));
    if (r == 3) sm.nested(Kind::mpior_neighbor, mpi_args(g, trace::kProcNull, trace::kNeighborIn));
    sm.call(Kind::MPI_Neighbor_allgather, mpi_args(g, 0, 0, 8), 0, r == 0 ? kLate : 0, 0, trace::flag::neighbor);
    pm.add(sm.stream(r));
  }
  std::vector<int64_t> t = replay_times(pm.plan, tmp / "fs");
  REQUIRE(t[1] >= kLate);
  REQUIRE(t[2] < kLate / 2);
  REQUIRE(t[3] < kLate / 2);
  // Without the neighbour records the communicator meets as a whole.
  PlanMaker whole(4);
  int64_t w = whole.comm({0, 1, 2, 3});
  for (int32_t r = 0; r < 4; ++r) {
    StreamMaker sm;
    sm.call(Kind::MPI_Neighbor_allgather, mpi_args(w, 0, 0, 8), 0, r == 0 ? kLate : 0, 0, trace::flag::neighbor);
    whole.add(sm.stream(r));
  }
  REQUIRE(replay_times(whole.plan, tmp / "fs2")[3] >= kLate);
}

TEST_CASE("a rooted collective on an intercommunicator: the root and the other group", "[mpi]") {
  // Intercommunicator {0, 1 | 2, 3}: rank 0 broadcasts (MPI_ROOT) after
  // 80 ms, rank 1 passes MPI_PROC_NULL, ranks 2 and 3 wait for rank 0; then
  // rank 2 is the root (MPI_ROOT) of a reduce from 0 and 1, rank 3 passes
  // MPI_PROC_NULL.
  TempDir tmp;
  PlanMaker pm(4);
  int64_t ic = pm.comm({0, 1, 2, 3});
  for (int32_t r = 0; r < 4; ++r) {
    bool low = r < 2;
    int64_t begin = low ? 2 : 0;
    int64_t bcast_root = r == 1 ? trace::kProcNull : 0;
    int64_t reduce_root = r == 3 ? trace::kProcNull : 2;
    StreamMaker sm;
    sm.call(Kind::MPI_Bcast, mpi_args(ic, 0, 0, 8, bcast_root, 0, begin, 2), 0, r == 0 ? kLate : 0);
    sm.call(Kind::MPI_Reduce, mpi_args(ic, 0, 0, 8, reduce_root, 1, begin, 2));
    pm.add(sm.stream(r));
  }
  std::vector<int64_t> t = replay_times(pm.plan, tmp / "fs");
  REQUIRE(t[2] >= kLate);  // waited for the broadcast
  REQUIRE(t[3] >= kLate);
  REQUIRE(t[1] < kLate / 2);  // took no part in the broadcast, sent its reduce contribution
}

TEST_CASE("a polling barrier: members leave each generation together, an abort still releases them", "[mpi]") {
  REQUIRE(poll_ns(1) > 0);  // one thread always has a core
  REQUIRE(poll_ns(1u << 30) == 0);
  Progress progress(3, 60);
  CommBarrier barrier(3, 20'000'000);  // 20 ms of polling: a late member is still polled for
  progress.set_waker([&] { barrier.wake_all(); });
  std::atomic<int> passed{0}, bad{0};  // Catch2's REQUIRE is not for other threads
  std::vector<int> seen(3, 0);
  auto member = [&](int id, int64_t late_ns) {
    for (int i = 0; i < 200; ++i) {
      if (late_ns && i % 50 == 0) std::this_thread::sleep_for(std::chrono::nanoseconds(late_ns));
      bad += barrier.wait(progress, "m") != WaitResult::ok;
      bad += last_release_ns() <= 0;
      // No member is a whole generation ahead: everyone passed the previous one.
      bad += passed.load() < i * 3;
      ++passed;
      ++seen[size_t(id)];
    }
  };
  std::thread a(member, 0, 0), b(member, 1, 0), c(member, 2, 1'000'000);
  a.join();
  b.join();
  c.join();
  REQUIRE(bad == 0);
  REQUIRE(seen == std::vector<int>{200, 200, 200});
  // Two of three arrive, then an abort: the pollers return aborted.
  WaitResult r1 = WaitResult::ok, r2 = WaitResult::ok;
  std::thread d([&] { r1 = barrier.wait(progress, "d"); });
  std::thread e([&] { r2 = barrier.wait(progress, "e"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  progress.abort("stop");
  d.join();
  e.join();
  REQUIRE(r1 == WaitResult::aborted);
  REQUIRE(r2 == WaitResult::aborted);
  progress.set_waker({});
}

TEST_CASE("a barrier member knows whether it slept; who waits is described only when needed", "[mpi]") {
  Progress progress(2, 60);
  int made = 0;
  auto who = [&] { return "member " + std::to_string(++made); };
  for (int64_t spin : {int64_t(0), int64_t(2'000'000'000)}) {
    CommBarrier barrier(2, spin);
    bool slept = false, main_slept = false;
    int64_t released = 0;
    std::thread other([&] {
      clear_last_release();
      barrier.wait(progress, who);
      slept = last_wait_slept();
      released = last_release_ns();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // usually the other arrives first
    clear_last_release();
    REQUIRE(barrier.wait(progress, who) == WaitResult::ok);
    main_slept = last_wait_slept();
    other.join();
    // The first to arrive slept without polling and saw the release with 2 s of
    // it; the last arriver never waits.
    REQUIRE(int(slept) + int(main_slept) == (spin == 0 ? 1 : 0));
    REQUIRE(released == last_release_ns());
  }
  REQUIRE(made == 1);  // only the member that slept named itself (for the list of blocked threads)
}

// MPICH's mt_probe_sendrecv: a rank's threads make collectives on one
// communicator, and the threads' replay may reach them out of their traced
// order. Each collective meets its own instance (the tracer's count) on the
// other ranks: thread 0's second barrier (seq 1) arrives at once on both
// ranks, thread 1's first (seq 0) 30 ms late on rank 0, and rank 1's thread 0
// waits before it for a message rank 0's thread 1 sends after the first.
// Meeting in arrival order would pair rank 0's seq 1 with rank 1's seq 0 and
// deadlock.
TEST_CASE("threads' collectives on one communicator meet their own instance", "[mpi]") {
  TempDir tmp;
  PlanMaker pm(2);
  auto barrier = [](int64_t seq) {
    auto a = mpi_args(0);
    a[trace::arg::coll_seq] = seq;
    return a;
  };
  StreamMaker r0t0, r0t1, r1t0, r1t1;
  r0t0.call(Kind::MPI_Barrier, barrier(1));
  r0t1.call(Kind::MPI_Barrier, barrier(0), 0, 30'000'000);
  r0t1.call(Kind::MPI_Send, mpi_args(0, 1, 9, 4));
  r1t0.call(Kind::MPI_Recv, mpi_args(0, 0, 9, 4, 0, 0, 0, 9));
  r1t0.call(Kind::MPI_Barrier, barrier(1));
  r1t1.call(Kind::MPI_Barrier, barrier(0));
  pm.add(r0t0.stream(0, 0));
  pm.add(r0t1.stream(0, 1));
  pm.add(r1t0.stream(1, 0));
  pm.add(r1t1.stream(1, 1));
  REQUIRE(replay_error(pm.plan, options(tmp / "fs", 2)) == "completed");
}
