#include "replayer/comm_cost.hpp"

#include <catch2/catch.hpp>

#include "replayer/engine.hpp"
#include "test/replayer/plan_maker.hpp"

using namespace mpior::replay;
using namespace mpior::replay::testing;
using mpior::trace::Kind;
namespace trace = mpior::trace;

namespace {

// Two ranks, 20 steps: rank 0 sends 4 KiB, rank 1 receives it; then an
// Allreduce. Traced: the receive took `recv_ns`, the Allreduce `coll_ns`,
// nobody waited (both computed 1 ms).
PlanMaker exchange_plan(int64_t recv_ns, int64_t coll_ns, int steps = 20) {
  PlanMaker pm(2, 0);
  for (int32_t r = 0; r < 2; ++r) {
    StreamMaker sm(false);
    sm.call(Kind::MPI_Init, mpi_args(0));
    for (int i = 0; i < steps; ++i) {
      if (r == 0)
        sm.call(Kind::MPI_Send, mpi_args(0, 1, 3, 4096), 0, 1'000'000, 2'000);
      else
        sm.call(Kind::MPI_Recv, mpi_args(0, 0, 3, 4096, 0, 0, 0, 3), 0, 1'000'000, recv_ns);
      sm.call(Kind::MPI_Allreduce, mpi_args(0, 0, 0, 8), 0, 0, coll_ns);
    }
    sm.call(Kind::MPI_Finalize, mpi_args(0));
    pm.add(sm.stream(r));
  }
  return pm;
}

ReplayOptions options(const std::string& root) {
  ReplayOptions opt;
  opt.setup.fs = root;
  opt.plan_name = "cost-plan";
  return opt;
}

}  // namespace

TEST_CASE("calls are classed by operation, size class and communicator size", "[cost]") {
  PlanMaker pm = exchange_plan(300'000, 500'000);
  CommCosts costs(pm.plan);
  const auto& t = costs.table();
  REQUIRE(t.size() == 3);
  const CostEntry& recv = t.at({trace::OpClass::recv, 13, 2});  // 4096 needs 13 bits
  REQUIRE(recv.calls == 20);
  REQUIRE(recv.cost_ns == Approx(300'000));
  REQUIRE(t.at({trace::OpClass::send, 13, 2}).cost_ns == Approx(2'000));
  const CostEntry& coll = t.at({trace::OpClass::allcoll, 4, 2});
  REQUIRE(coll.calls == 40);  // both ranks' positions
  REQUIRE(coll.positions == 2);
  REQUIRE(coll.cost_ns == Approx(500'000));
  // Another size of the same operation: the nearest class.
  trace::Event ev;
  ev.kind = Kind::MPI_Recv;
  ev.rank = 1;
  ev.args = mpi_args(0, 0, 3, 8000);
  REQUIRE(costs.cost(pm.plan, ev) == 300'000);
  ev.kind = Kind::MPI_Comm_split;  // not charged
  REQUIRE(costs.cost(pm.plan, ev) == 0);
  REQUIRE(costs.to_json().size() == 3);
}

TEST_CASE("the replay charges communication its traced cost, not only its wait", "[cost]") {
  TempDir tmp;
  // 20 steps of 1 ms compute + 0.3 ms receive + 0.5 ms Allreduce: about 36 ms.
  PlanMaker pm = exchange_plan(300'000, 500'000);
  Report rep = replay_plan(pm.plan, options(tmp / "fs"));
  REQUIRE(rep.errors == 0);
  const ThreadSummary& r1 = rep.per_thread.at(1);
  // Without costs the receive and the Allreduce would take only their waits
  // (near zero: both ranks compute alike): the replay would last ~20 ms.
  REQUIRE(r1.replay_ns >= 20 * (1'000'000 + 300'000 + 500'000));
  // How the 16 ms of costs split between charged sleeps and gaps depends on
  // how late a loaded machine wakes the replay (late wake-ups are paid off
  // from later gaps): some are charged, and the whole is there.
  REQUIRE(r1.charged_ns > 0);
  REQUIRE(r1.comm_ns >= r1.charged_ns);
  REQUIRE(r1.comm_ns + r1.compute_ns + r1.wait_ns >= 20 * (1'000'000 + 300'000 + 500'000) - 2'000'000);
  REQUIRE(r1.traced_mpi_ns == 20 * (300'000 + 500'000));
  REQUIRE(r1.traced_compute_ns == 20 * 1'000'000);
  REQUIRE(r1.io_ns == 0);
  nlohmann::json j = to_json(rep);
  REQUIRE(j["per_rank"][1]["predicted"]["comm_s"].get<double>() == Approx(double(r1.comm_ns) / 1e9));
  REQUIRE(j["comm_costs"].size() == 3);
}

TEST_CASE("--io-only charges no communication cost", "[cost]") {
  TempDir tmp;
  PlanMaker pm = exchange_plan(2'000'000, 2'000'000, 10);
  ReplayOptions opt = options(tmp / "fs");
  opt.io_only = true;
  opt.compute_scale = 0;
  Report rep = replay_plan(pm.plan, opt);
  // 40 ms of costs not charged: nothing slept for them, none calibrated
  REQUIRE(rep.per_thread.at(1).charged_ns == 0);
  REQUIRE(rep.per_thread.at(0).charged_ns == 0);
  REQUIRE(rep.comm_costs.empty());
}

TEST_CASE("a collective is charged its last arriver's duration, not the waiting of the others", "[cost]") {
  // Rank 1 always arrives last at the Barrier (its 3 us are all cost); rank 0
  // waited 50 us more for it each time. The mean (26.5 us) would count that
  // waiting again on top of the replay's own.
  PlanMaker pm(2, 0);
  for (int32_t r = 0; r < 2; ++r) {
    StreamMaker sm(false);
    sm.call(Kind::MPI_Init, mpi_args(0));
    for (int i = 0; i < 20; ++i) sm.call(Kind::MPI_Barrier, mpi_args(0), 0, 1'000, r == 0 ? 53'000 : 3'000);
    sm.call(Kind::MPI_Finalize, mpi_args(0));
    pm.add(sm.stream(r));
  }
  CommCosts costs(pm.plan);
  const CostEntry& b = costs.table().at({trace::OpClass::barrier, 0, 2});
  REQUIRE(b.calls == 40);
  REQUIRE(b.cost_ns == Approx(3'000).epsilon(0.05));  // a histogram bin's middle
}

TEST_CASE("a Gather whose members were pruned is charged its root's whole duration", "[cost]") {
  // Rank 0 gathers 20 times (10 or 20 us, a member sometimes late); rank 1's
  // Gathers were pruned (no I/O), so the replay never makes the root wait
  // for it: the root's durations hold no waiting the replay reproduces.
  PlanMaker pm(2, 0);
  for (int32_t r = 0; r < 2; ++r) {
    StreamMaker sm(false);
    sm.call(Kind::MPI_Init, mpi_args(0));
    if (r == 0)
      for (int i = 0; i < 20; ++i)
        sm.call(Kind::MPI_Gather, mpi_args(0, 0, 0, 4096, 0), 0, 1'000, i % 2 ? 20'000 : 10'000);
    sm.call(Kind::MPI_Finalize, mpi_args(0));
    pm.add(sm.stream(r));
  }
  CommCosts costs(pm.plan);
  const CostEntry& g = costs.table().at({trace::OpClass::gather, 13, 2});
  REQUIRE(g.calls == 20);
  REQUIRE(g.cost_ns == Approx(15'000).epsilon(0.1));  // the shorter half's mean: 10 us
  // With every member's call kept, the last arrivers': the shortest half.
  PlanMaker both(2, 0);
  for (int32_t r = 0; r < 2; ++r) {
    StreamMaker sm(false);
    sm.call(Kind::MPI_Init, mpi_args(0));
    for (int i = 0; i < 20; ++i) sm.call(Kind::MPI_Gather, mpi_args(0, 0, 0, 4096, 0), 0, 1'000, r ? 3'000 : 40'000);
    sm.call(Kind::MPI_Finalize, mpi_args(0));
    both.add(sm.stream(r));
  }
  REQUIRE(CommCosts(both.plan).table().at({trace::OpClass::gather, 13, 2}).cost_ns == Approx(3'000).epsilon(0.1));
}

TEST_CASE("a receive is charged the shortest half of its durations: the partner that came second", "[cost]") {
  // An exchange each step in which the ranks take turns to come second (one
  // rank's fsync longer than the other's): the one that came first waited
  // 500 us for its partner, the other only paid the receive's 5 us.
  PlanMaker pm(2, 0);
  for (int32_t r = 0; r < 2; ++r) {
    StreamMaker sm(false);
    sm.call(Kind::MPI_Init, mpi_args(0));
    for (int i = 0; i < 20; ++i) {
      bool first = (i + r) % 2 == 0;
      sm.call(Kind::MPI_Recv, mpi_args(0, 1 - r, 3, 4096, 0, 0, 1 - r, 3), 0, 1'000, first ? 505'000 : 5'000);
    }
    sm.call(Kind::MPI_Finalize, mpi_args(0));
    pm.add(sm.stream(r));
  }
  CommCosts costs(pm.plan);
  const CostEntry& recv = costs.table().at({trace::OpClass::recv, 13, 2});
  REQUIRE(recv.calls == 40);
  REQUIRE(recv.cost_ns == Approx(5'000).epsilon(0.05));  // the mean, 255 us, held the waiting
}

TEST_CASE("a communicator's creation takes its last arriver's duration, not the first's wait", "[cost]") {
  // Both ranks compute 2 ms and make a communicator; rank 0's MPI_Comm_dup
  // waited 1 s for rank 1 when traced (rank 1 was late by its I/O), rank 1's
  // took 0.2 ms. Replayed with its position's own duration, rank 0 passed
  // the 1 s again after the replay had brought both ranks there together.
  PlanMaker pm(2, 0);
  int64_t dup = pm.comm({0, 1});
  for (int32_t r = 0; r < 2; ++r) {
    StreamMaker sm(false);
    sm.call(Kind::MPI_Init, mpi_args(0));
    sm.call(Kind::MPI_Comm_dup, mpi_args(0, 0, 0, 0, 0, dup, 1), 0, 2'000'000, r == 0 ? 1'000'000'000 : 200'000);
    sm.call(Kind::MPI_Barrier, mpi_args(dup), 0, 1'000, 5'000);
    sm.call(Kind::MPI_Finalize, mpi_args(0));
    pm.add(sm.stream(r));
  }
  CommCosts costs(pm.plan);
  trace::Event ev;
  ev.kind = Kind::MPI_Comm_dup;
  ev.rank = 0;
  ev.args = mpi_args(0, 0, 0, 0, 0, dup, 1);
  trace::TimeStats first;
  first.add(1'000'000'000);
  REQUIRE(costs.floor_ns(pm.plan, ev, first) == Approx(200'000).epsilon(0.1));  // a histogram bin's middle
  trace::TimeStats quick;
  quick.add(50'000);  // a position quicker than the class keeps its own
  REQUIRE(costs.floor_ns(pm.plan, ev, quick) == 50'000);
  ev.kind = Kind::MPI_Finalize;  // other uncharged calls: the position's shortest
  REQUIRE(costs.floor_ns(pm.plan, ev, first) == 1'000'000'000);
  TempDir tmp;
  Report rep = replay_plan(pm.plan, options(tmp / "fs"));
  REQUIRE(rep.errors == 0);
  // 1 s with the position's own duration; 2.2 ms expected, so only a
  // scheduler holding the thread off for half a second could pass 0.5 s.
  REQUIRE(rep.per_thread.at(0).replay_ns < 500'000'000);
  REQUIRE(rep.per_thread.at(0).replay_ns >= 2'200'000);
}

// Two ranks, 20 collective 1 MiB writes of coll.dat lasting 30 ms on rank 0
// and 10 ms on rank 1 (the last arriver); `nested(sm, rank, call)` adds each
// call's file-system calls; then, with `independent`, a write_at.
template <class Nested>
PlanMaker coll_write_plan(int64_t& f, Nested nested, bool independent) {
  PlanMaker pm(2, 0);
  f = pm.file("/home/user/coll.dat", true);
  for (int32_t r = 0; r < 2; ++r) {
    StreamMaker sm(false);
    sm.call(Kind::MPI_Init, mpi_args(0));
    for (int i = 0; i < 20; ++i) {
      int64_t at = (r * 20 + i) << 20;
      sm.call(Kind::MPI_File_write_at_all, io_args(1, f, at, 1 << 20, trace::fio::kColl, 0), 0, 1'000,
              r == 0 ? 30'000'000 : 10'000'000);
      nested(sm, r, i);
    }
    if (independent) {
      sm.call(Kind::MPI_File_write_at, io_args(1, f, 0, 1 << 20, 0, 0), 0, 1'000, 5'000'000);
      sm.nested(Kind::pwrite, io_args(3, f, 0, 1 << 20), 1 << 20, 1'000'000, 3'000'000);
    }
    sm.call(Kind::MPI_Finalize, mpi_args(0));
    pm.add(sm.stream(r));
  }
  return pm;
}

TEST_CASE("a collective MPI-IO write is charged ROMIO's own time: its last arriver's, less its file calls", "[cost]") {
  // Each rank's pwrite took 3 ms of its call; rank 0 also waited 20 ms for rank 1.
  int64_t f = 0;
  PlanMaker pm = coll_write_plan(
      f,
      [&](StreamMaker& sm, int32_t r, int i) {
        sm.nested(Kind::pwrite, io_args(3, f, (r * 20 + i) << 20, 1 << 20), 1 << 20, r == 0 ? 26'000'000 : 6'000'000,
                  3'000'000);
      },
      true);
  CommCosts costs(pm.plan);
  const CostEntry& w = costs.table().at({trace::OpClass::mpiio_write, 21, 2});  // 1 MiB needs 21 bits
  REQUIRE(w.calls == 40);
  REQUIRE(w.positions == 2);
  REQUIRE(w.cost_ns == Approx(7'000'000).epsilon(0.1));  // a histogram bin's middle, less 3 ms
  trace::Event ev;
  ev.kind = Kind::MPI_File_write_at_all;
  ev.rank = 0;
  ev.args = io_args(1, f, 0, 1 << 20, trace::fio::kColl, 0);
  REQUIRE(costs.mpiio_cost(pm.plan, ev) == int64_t(w.cost_ns));
  ev.args = io_args(1, f, 0, 1 << 20, trace::fio::kColl | trace::fio::kEnd, 0);  // a split collective's end
  REQUIRE(costs.mpiio_cost(pm.plan, ev) == 0);
  ev.kind = Kind::MPI_File_write_at;  // independent: no meeting, nothing charged
  ev.args = io_args(1, f, 0, 1 << 20, 0, 0);
  REQUIRE(costs.mpiio_cost(pm.plan, ev) == 0);
}

TEST_CASE("a two-phase write's own time leaves out the aggregator's writes the others waited for", "[cost]") {
  // Rank 0 aggregates (two 4 ms pwrites a call); rank 1 only sends its data
  // and came last: its 10 ms held the aggregator's 8 ms.
  int64_t f = 0;
  PlanMaker pm = coll_write_plan(
      f,
      [&](StreamMaker& sm, int32_t r, int i) {
        for (int k = 0; r == 0 && k < 2; ++k)
          sm.nested(Kind::pwrite, io_args(3, f, (2 * i + k) << 20, 1 << 20), 1 << 20, 10'000'000 * (k + 1), 4'000'000);
      },
      false);
  CommCosts costs(pm.plan);
  REQUIRE(costs.table().at({trace::OpClass::mpiio_write, 21, 2}).cost_ns == Approx(2'000'000).epsilon(0.3));
}

TEST_CASE("a collective write's own time takes its nested writes over every call, not the first", "[cost]") {
  // As above, but the aggregator's first pwrite stalled 40 ms (a file's
  // first blocks on a loaded disk): taken from that first call, the nested
  // time (44 ms) exceeded the 10 ms call and ROMIO's own time was free.
  int64_t f = 0;
  PlanMaker pm = coll_write_plan(
      f,
      [&](StreamMaker& sm, int32_t r, int i) {
        for (int k = 0; r == 0 && k < 2; ++k)
          sm.nested(Kind::pwrite, io_args(3, f, (2 * i + k) << 20, 1 << 20), 1 << 20, 10'000'000 * (k + 1),
                    i == 0 && k == 0 ? 40'000'000 : 4'000'000);
      },
      false);
  CommCosts costs(pm.plan);
  REQUIRE(costs.table().at({trace::OpClass::mpiio_write, 21, 2}).cost_ns == Approx(2'000'000).epsilon(0.3));
}

TEST_CASE("lower_robust takes the shortest fraction of the durations without outliers", "[cost]") {
  trace::TimeStats d;
  for (int i = 0; i < 30; ++i) d.add(1'000);
  for (int i = 0; i < 10; ++i) d.add(100'000);
  REQUIRE(lower_robust(d, 0.5) == Approx(1'000).epsilon(0.05));  // quarter-octave bins
  REQUIRE(lower_robust(d, 1.0) == Approx(1'000).epsilon(0.05));  // 100x the median: held off a core
  trace::TimeStats spread;                                       // 10, 20 and 30 us: all within the fence
  for (int i = 0; i < 30; ++i) spread.add(10'000 * (1 + i % 3));
  REQUIRE(lower_robust(spread, 1.0) == Approx(spread.mean()).epsilon(0.1));
  REQUIRE(lower_robust(spread, 1.0 / 3) == Approx(10'000).epsilon(0.1));
  trace::TimeStats once;
  once.add(7'000'000);
  REQUIRE(lower_robust(once, 0.5) == 7'000'000);  // a single duration is all there is
}

TEST_CASE("a collective's cost leaves out the partners the scheduler held off when traced", "[cost]") {
  // 40 Barriers at 2 ranks between phases: rank 1 arrives last and pays
  // 30 us, rank 0 waited 50 ms for it to end its phase. 6 times rank 1 was
  // also held off a core inside the Barrier (a loaded machine): 15 ms. Those
  // are among the shortest half, the last arrivers' share, whose mean
  // (2.3 ms) would charge that load again on top of the replay's own.
  PlanMaker pm(2, 0);
  for (int32_t r = 0; r < 2; ++r) {
    StreamMaker sm(false);
    sm.call(Kind::MPI_Init, mpi_args(0));
    for (int i = 0; i < 40; ++i) {
      int64_t held = i % 7 == 3 ? 15'000'000 : 30'000;
      sm.call(Kind::MPI_Barrier, mpi_args(0), 0, 1'000, r == 0 ? 50'000'000 + held : held);
    }
    sm.call(Kind::MPI_Finalize, mpi_args(0));
    pm.add(sm.stream(r));
  }
  CommCosts costs(pm.plan);
  const CostEntry& b = costs.table().at({trace::OpClass::barrier, 0, 2});
  REQUIRE(b.calls == 80);
  REQUIRE(b.cost_ns == Approx(30'000).epsilon(0.1));
}

TEST_CASE("time in pruned MPI calls is named when it is 5% of the traced time or more", "[cost]") {
  PlanMaker pm(2, 500'000'000);  // two ranks traced 0.5 s each
  REQUIRE(pruned_time_warning(pm.plan).empty());
  pm.plan.pruned[size_t(Kind::MPI_Allreduce)] = {80, 40'000'000};
  pm.plan.pruned[size_t(Kind::MPI_Waitall)] = {64, 9'000'000};
  REQUIRE(pruned_time_warning(pm.plan).empty());  // 49 ms of 1 s: below 5%
  pm.plan.pruned[size_t(Kind::MPI_Waitall)] = {64, 10'000'000};
  REQUIRE_THAT(pruned_time_warning(pm.plan), Catch::StartsWith("0.050000 s of the traced time (5% over all ranks)") &&
                                                 Catch::Contains("MPIOR_PRUNE=0"));
}
