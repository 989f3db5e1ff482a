// Ranks at once of metadata classes, counted by synchronisation epoch.
#include <fcntl.h>

#include <catch2/catch.hpp>
#include <string>

#include "predict/jobs.hpp"
#include "predict/op_classes.hpp"
#include "test/predict/predict_fixture.hpp"

using namespace mpior;
using namespace mpior::predict;
using namespace mpior::predict::testing;

namespace {
// mdtest's shape: each rank creates its files in one directory, writing 4 KiB to each and closing it, after a
// barrier; rank 1's loop starts `offset` ns after rank 0's. With `barrier_between`, rank 0 creates between
// the first and second barriers and rank 1 after the second (two epochs); otherwise both after the first.
Classes create_loops(int64_t offset, bool barrier_between) {
  PlanMaker pm(2);
  auto barrier = [&](int r, int64_t seq, int64_t dur) {
    pm.call(r, Kind::MPI_Barrier, {{arg::comm, 0}, {arg::coll_seq, seq}}, dur);
  };
  auto loop = [&](int r) {
    for (int i = 0; i < 50; ++i) {
      int32_t f = pm.file("/work/md/file." + std::to_string(r) + "." + std::to_string(i));
      pm.call(r, Kind::open, {{arg::handle, 5}, {arg::file, f}, {arg::flags, O_WRONLY | O_CREAT}}, 20000, 0, 5);
      pm.call(r, Kind::write, {{arg::handle, 5}, {arg::file, f}, {arg::count, 4096}}, 20000, 0, 4096);
      pm.call(r, Kind::close, {{arg::handle, 5}, {arg::file, f}}, 10000);
    }
  };
  barrier(0, 0, 1000);
  barrier(1, 0, offset);
  loop(0);
  if (barrier_between) barrier(1, 1, 1000), barrier(0, 1, 1000);
  loop(1);
  if (!barrier_between) barrier(0, 1, 1000), barrier(1, 1, 1000);
  return derive_classes(pm.done());
}
}  // namespace

TEST_CASE("concurrency of metadata: ranks creating between the same two barriers, wherever their clocks put them",
          "[predict]") {
  // Rank 1's creates fall between rank 0's: no two calls overlap, yet both ranks create at once in the
  // directory (and contend for it): two workers.
  Classes interleaved = create_loops(25000, false);
  const IoClass& create = find(interleaved, "create per-process");
  REQUIRE(create.peak == 2);
  REQUIRE(create.at_once == Approx(2));
  REQUIRE(create.concurrency() == 2);
  JobPlan jp = plan_jobs(interleaved, {});
  for (size_t i = 0; i < interleaved.classes.size(); ++i)
    if (&interleaved.classes[i] == &create) REQUIRE(jp.jobs[size_t(jp.job_of[i])].meta_args[1] == "2");
  // Data calls keep their own spans: the writes, interleaved so, are one at a time.
  REQUIRE(find(interleaved, "write 4KiB sequential per-process").concurrency() == 1);
  // Rank 1's loop placed 250 ms after rank 0's (a rebuilt timeline's clocks), between the same barriers:
  // still two at once.
  Classes far = create_loops(250'000'000, false);
  REQUIRE(find(far, "create per-process").at_once == Approx(2));
  REQUIRE(find(far, "create per-process").concurrency() == 2);
  // A barrier between their loops, at whatever distance: one at a time.
  Classes apart = create_loops(25000, true);
  REQUIRE(find(apart, "create per-process").peak == 1);
  REQUIRE(find(apart, "create per-process").concurrency() == 1);
}

TEST_CASE("concurrency of metadata: each epoch weighs by the class's time in it", "[predict]") {
  // Epoch 0: rank 0 alone stats for 30 ms; epoch 1 (after a barrier): both ranks, 10 ms each.
  PlanMaker pm(2);
  int32_t f = pm.file("/work/md/x");
  for (int i = 0; i < 30; ++i) pm.call(0, Kind::stat, {{arg::file, f}}, 1000000);
  for (int r = 0; r < 2; ++r) {
    pm.call(r, Kind::MPI_Barrier, {{arg::comm, 0}, {arg::coll_seq, 0}}, 1000);
    for (int i = 0; i < 10; ++i) pm.call(r, Kind::stat, {{arg::file, f}}, 1000000);
  }
  Classes cs = derive_classes(pm.done());
  const IoClass& stat = find(cs, "stat shared");
  REQUIRE(stat.peak == 2);
  // (30 x 1 + 20 x 2) / 50.
  REQUIRE(stat.at_once == Approx(70.0 / 50.0));
}
