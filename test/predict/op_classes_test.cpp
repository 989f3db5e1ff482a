// The I/O operation classes mpior-predict derives from a plan, its fio jobs
// and fio's JSON (issue 17).
#include "predict/op_classes.hpp"

#include <fcntl.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "predict/jobs.hpp"
#include "predict/predict.hpp"
#include "test/predict/predict_fixture.hpp"

using namespace mpior;
using namespace mpior::predict;
using namespace mpior::predict::testing;

TEST_CASE("a checkpoint's classes: shared random writes with an fsync after each", "[predict]") {
  PlanMaker pm = checkpoint(4, 4, 524288);
  Classes cs = derive_classes(pm.done());
  const IoClass& w = find(cs, "write 512KiB random shared fsync/1");
  REQUIRE(w.count == 16);
  REQUIRE(w.concurrency() == 4);
  REQUIRE(w.bytes == 16 * 524288);
  REQUIRE(w.region == 524288);
  REQUIRE(w.time_ns == 16 * 400000);
  const IoClass& s = find(cs, "fsync 512KiB random shared fsync/1");
  REQUIRE(s.count == 16);
  REQUIRE(s.time_ns == 16 * 900000);
  REQUIRE(find(cs, "create shared").count == 1);
  REQUIRE(find(cs, "open shared").count == 4);
  REQUIRE(find(cs, "close shared").count == 5);
  REQUIRE(cs.classes.size() == 5);
  REQUIRE(cs.io_ns == 16 * 1300000 + 3000 + 4 * 2000 + 5 * 1000);  // MPI time is not I/O time
  REQUIRE(cs.classes[0].key.op == Op::sync);                       // largest first
}

TEST_CASE("sequential writes to a file per rank, never synced", "[predict]") {
  PlanMaker pm(2);
  for (int r = 0; r < 2; ++r) {
    int32_t f = pm.file("/work/nton." + std::to_string(r));
    for (int i = 0; i < 10; ++i)
      pm.call(r, Kind::write, {{arg::handle, 3}, {arg::file, f}, {arg::offset, i * 4096}, {arg::count, 4096}}, 5000, 0,
              4096);
  }
  Classes cs = derive_classes(pm.done());
  REQUIRE(cs.classes.size() == 1);
  const IoClass& w = find(cs, "write 4KiB sequential per-process");
  REQUIRE(w.count == 20);
  REQUIRE(w.concurrency() == 2);
  REQUIRE(w.region == 40960);
}

TEST_CASE("nested calls are not counted twice; metadata and fflush have classes of their own", "[predict]") {
  PlanMaker pm(1);
  int32_t f = pm.file("/work/a"), g = pm.file("/work/b");
  pm.call(0, Kind::MPI_File_write_at, {{arg::handle, 1}, {arg::file, f}, {arg::offset, 0}, {arg::count, 3000}}, 7000);
  pm.call(0, Kind::pwrite64, {{arg::handle, 4}, {arg::file, f}, {arg::offset, 0}, {arg::count, 3000}}, 6000, 1, 3000);
  pm.call(0, Kind::stat, {{arg::file, g}}, 800);
  pm.call(0, Kind::unlink, {{arg::file, g}}, 900);
  pm.call(0, Kind::fflush, {{arg::handle, 3}, {arg::file, g}}, 100);
  Classes cs = derive_classes(pm.done());
  REQUIRE(cs.classes.size() == 5);
  REQUIRE(find(cs, "write 4KiB sequential per-process").count == 1);  // the MPI-IO call, not the pwrite under it
  REQUIRE(find(cs, "stat per-process").count == 1);
  REQUIRE(find(cs, "unlink per-process").count == 1);
  REQUIRE(find(cs, "other per-process").count == 1);
  REQUIRE(cs.io_ns == 7000 + 800 + 900 + 100);
  // The MPI-IO call's time: the file system's (its pwrite) in its class, the rest MPI-IO's own.
  REQUIRE(find(cs, "write 4KiB sequential per-process").time_ns == 6000);
  REQUIRE(find(cs, "MPI-IO's own per-process").time_ns == 1000);
}

TEST_CASE("collective writes: a rank's waits for the other's pwrites scale as they do, the rest as traced",
          "[predict]") {
  // IOR's collective MPI-IO, 4 calls of 10 ms a rank: rank 0's pwrite takes 9 ms, rank 1's 1 ms, so rank 1
  // waits 8 ms of its 9 ms beyond its pwrite for rank 0's (1 ms exchanging); rank 0 waits for nobody.
  PlanMaker pm(2);
  for (trace::PlanRank& r : pm.plan.ranks) r.comms = {0};  // the file's communicator, fcomm 0
  int32_t f = pm.file("/work/ior.dat");
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 4; ++i) {
      int64_t at = (r * 4 + i) * 1048576;
      pm.call(r, Kind::MPI_File_write_at_all,
              {{arg::handle, 1}, {arg::file, f}, {arg::offset, at}, {arg::count, 1048576}, {arg::flags, 5}}, 10000000);
      pm.call(r, Kind::pwrite64, {{arg::handle, 7}, {arg::file, f}, {arg::offset, at}, {arg::count, 1048576}},
              r ? 1000000 : 9000000, 1, 1048576);
    }
  Classes cs = derive_classes(pm.done());
  REQUIRE(cs.io_ns == 8 * 10000000);
  const IoClass& w = find(cs, "write 1MiB sequential shared");
  REQUIRE(w.time_ns == 4 * 10000000);
  const IoClass& waits = find(cs, "MPI-IO's own shared");
  REQUIRE(waits.time_ns == 4 * (1000000 + 9000000));
  REQUIRE(waits.within == std::map<ClassKey, int64_t>{{w.key, 40000000}});  // all spent in those writes
  REQUIRE(waits.waiting == std::map<ClassKey, int64_t>{{w.key, 4 * 8000000}});
  JobPlan jp = plan_jobs(cs, {});
  size_t own = class_label(cs.classes[0].key) == "MPI-IO's own shared" ? 0 : 1;
  REQUIRE(jp.unmeasured[own].find("file-system calls scaled") != std::string::npos);
  std::vector<std::optional<Runs>> runs(2);
  runs[1 - own] = Runs{{1.0, 1.0, 1.0}, {0.25, 0.25, 0.25}};  // the file system 4x faster
  Prediction p = predict_io(cs, runs);
  // 32 ms of waits for rank 0's pwrites -> 8 ms, 8 ms as traced: 16 of 40 ms; + 10 ms of writes.
  REQUIRE(p.classes[own].ratio == Approx(0.4));
  REQUIRE(p.predicted_io_s == Approx(0.016 + 0.010));
  REQUIRE(p.low_s == Approx(0.010 + 0.010));   // all of it scaled as the writes it was spent in
  REQUIRE(p.high_s == Approx(0.040 + 0.010));  // or none
  // Three traced runs alike predict as one: their own times' split is shares, not sums.
  Classes three = combine_runs({cs, cs, cs});
  Prediction p3 = predict_io(three, runs);
  REQUIRE(p3.classes[own].ratio == Approx(0.4));
  REQUIRE(p3.classes[own].low_s == Approx(0.010));
  REQUIRE(p3.classes[own].high_s == Approx(0.040));
  // Slower on the target: the same the other way.
  runs[1 - own] = Runs{{1.0, 1.0, 1.0}, {3.0, 3.0, 3.0}};
  p = predict_io(cs, runs);
  REQUIRE(p.classes[own].predicted_s == Approx(0.096 + 0.008));
  REQUIRE(p.classes[own].low_s == Approx(0.040));
  REQUIRE(p.classes[own].high_s == Approx(0.120));
  // The writes' spread widens the waits' bounds, beyond the span.
  runs[1 - own] = Runs{{1.0, 1.0, 1.0}, {0.2, 0.25, 0.3}};
  p = predict_io(cs, runs);
  REQUIRE(p.classes[own].rel_sd == Approx(0.8 * p.classes[1 - own].rel_sd));  // over the 32 of 40 ms it scales
  REQUIRE(p.classes[own].low_s < 0.010 * 0.99);
  REQUIRE(p.classes[own].high_s > 0.040 * 1.01);
  // Writes predicted as count x the target's time per op (2 us a call on the reference): their ratio to that
  // reference says nothing of the waits around them, kept as traced.
  runs[1 - own] = Runs{{2e-6, 2e-6, 2e-6}, {1e-3, 1e-3, 1e-3}};
  p = predict_io(cs, runs);
  REQUIRE(p.classes[1 - own].per_op_basis);
  REQUIRE(p.classes[own].ratio == 1.0);
  REQUIRE(p.classes[own].high_s == Approx(0.040));
  // Unmeasured (below --min-share, say): as traced.
  p = predict_io(cs, std::vector<std::optional<Runs>>(2));
  REQUIRE(p.classes[own].ratio == 1.0);
  REQUIRE(p.classes[own].predicted_s == Approx(0.040));
}

TEST_CASE("MPI-IO's own time: collective calls matched across ranks by their order on the communicator", "[predict]") {
  // A collective open (rank 0's open 3 ms, rank 1's 1 ms), two collective writes (rank 1's pwrites 5 ms
  // longer than rank 0's), then an independent write (no kColl) that waits for nobody; every call 8 ms.
  PlanMaker pm(2);
  for (trace::PlanRank& r : pm.plan.ranks) r.comms = {0};
  int32_t f = pm.file("/work/ior.dat");
  for (int r = 0; r < 2; ++r) {
    pm.call(r, Kind::MPI_File_open, {{arg::handle, 1}, {arg::file, f}, {arg::flags, 1}}, 8000000);
    pm.call(r, Kind::open, {{arg::handle, 7}, {arg::file, f}, {arg::flags, O_RDWR}}, r ? 1000000 : 3000000, 1, 7);
    for (int i = 0; i < 2; ++i) {
      int64_t at = (r * 2 + i) * 65536;
      pm.call(r, Kind::MPI_File_write_at_all,
              {{arg::handle, 1}, {arg::file, f}, {arg::offset, at}, {arg::count, 65536}, {arg::flags, 5}}, 8000000);
      pm.call(r, Kind::pwrite64, {{arg::handle, 7}, {arg::file, f}, {arg::offset, at}, {arg::count, 65536}},
              r ? 6000000 : 1000000, 1, 65536);
    }
    pm.call(r, Kind::MPI_File_write_at, {{arg::handle, 1}, {arg::file, f}, {arg::offset, 0}, {arg::count, 512}},
            8000000);
    pm.call(r, Kind::pwrite64, {{arg::handle, 7}, {arg::file, f}, {arg::offset, 0}, {arg::count, 512}},
            r ? 1000000 : 7000000, 1, 512);
  }
  Classes cs = derive_classes(pm.done());
  const IoClass& waits = find(cs, "MPI-IO's own shared");
  const IoClass& w = find(cs, "write 64KiB sequential shared");
  ClassKey open_key = find(cs, "open shared").key;
  // Of 38 ms of own time (rank 0: 5 + 7 + 7 + 1, rank 1: 7 + 2 + 2 + 7), rank 1 waited 2 ms for rank 0's
  // open, rank 0 5 ms for each of rank 1's pwrites; the independent write waited for nobody.
  REQUIRE(waits.time_ns == 38000000);
  REQUIRE(waits.waiting == std::map<ClassKey, int64_t>{{open_key, 2000000}, {w.key, 2 * 5000000}});
  std::vector<std::optional<Runs>> runs(cs.classes.size());
  for (size_t i = 0; i < cs.classes.size(); ++i)
    if (cs.classes[i].key == w.key) runs[i] = Runs{{1.0, 1.0, 1.0}, {0.5, 0.5, 0.5}};
  Prediction p = predict_io(cs, runs);
  size_t own = 0;
  while (cs.classes[own].key.op != Op::mpiio_own) ++own;
  // The 10 ms waited for the writes at their ratio 0.5; the open's wait (open not measured) as traced.
  REQUIRE(p.classes[own].ratio == Approx((38 - 5) / 38.0));
  // All scaled as its calls' classes: the collective writes' 18 ms at 0.5 (the rest's 20 ms as traced).
  REQUIRE(p.classes[own].low_s == Approx((20 + 9) / 1000.0));
  REQUIRE(p.classes[own].high_s == Approx(0.038));
}

TEST_CASE("fio jobs: a sync class shares its writes' job; close and small classes are not measured", "[predict]") {
  PlanMaker pm = checkpoint(4, 4, 524288);
  Classes cs = derive_classes(pm.done());
  JobPlan jp = plan_jobs(cs, {0.5, 0.01, 12});
  REQUIRE(jp.jobs.size() == 1);
  const std::string& t = jp.jobs[0].text;
  for (const char* want : {"rw=randwrite", "bs=524288", "size=524288", "numjobs=4", "filename=shared.dat",
                           "offset_increment=524288", "fsync=1", "directory=${MPIOR_FIO_DIR}", "runtime=1000ms"})
    CHECK(t.find(want) != std::string::npos);
  // The traced work (4 writes of 512 KiB per rank, an fsync after each, 400 us a write) to about 0.5 s: 313
  // passes over the region (4 jobs on one file cannot each unlink it).
  for (const char* want : {"io_size=2097152\n", "loops=313\n"}) CHECK(t.find(want) != std::string::npos);
  CHECK(t.find("unlink_each_loop") == std::string::npos);
  CHECK(t.find("time_based") == std::string::npos);
  REQUIRE(jp.jobs[0].per_rank_ops == 4);
  REQUIRE(jp.jobs[0].passes == 313);
  size_t measured = 0;
  for (size_t i = 0; i < cs.classes.size(); ++i) {
    Op op = cs.classes[i].key.op;
    if (op == Op::write || op == Op::sync) {
      REQUIRE(jp.job_of[i] == 0);
      REQUIRE(jp.section[i] == (op == Op::sync ? "sync" : "write"));
      ++measured;
    } else {
      REQUIRE(jp.job_of[i] == -1);  // create, open, close: each under 1% of the I/O time
      REQUIRE(!jp.unmeasured[i].empty());
    }
  }
  REQUIRE(measured == 2);
  REQUIRE(jp.space == kMaxPacedPasses * 4 * 524288);  // a file of the 4 ranks' blocks for each pass
  // The ranks rewrite their block: no random map, whose every pass (one write here) ends with one more fsync;
  // fio then syncs once per write, as the ranks did, and its own count is the syncs asked for.
  CHECK(t.find("norandommap=1") != std::string::npos);
  Classes tmpfs = derive_classes(checkpoint(4, 4, 524288, 300).done());  // fsync next to free: measured all the same
  JobPlan cheap = plan_jobs(tmpfs, {0.5, 0.01, 12});
  REQUIRE(cheap.jobs.size() == 1);
  REQUIRE(cheap.jobs[0].used.size() == 2);
  // fsyncs slow enough (2 s each) that the writes they sync are 0.02% of the I/O time: measured all the
  // same, with their fsyncs (the two are predicted together, by the ratio of the write's cycle).
  Classes slow = derive_classes(checkpoint(4, 4, 524288, 2'000'000'000).done());
  JobPlan synced = plan_jobs(slow, {0.5, 0.01, 12});
  REQUIRE(synced.jobs.size() == 1);
  REQUIRE(synced.jobs[0].used.size() == 2);
  JobPlan all = plan_jobs(cs, {0.5, 0.0, 12});
  REQUIRE(all.jobs.size() == 4);  // + mpior-predict-meta for create, open and close
  for (size_t j = 1; j < 4; ++j) {
    REQUIRE(all.jobs[j].file() == all.jobs[j].name + ".meta");
    REQUIRE(all.jobs[j].text.find(std::string(kMetaProgram) + " ") != std::string::npos);
  }
}

TEST_CASE("fio jobs: the ranks' synced writes to one shared file are paced to stay in step", "[predict]") {
  Classes cs = derive_classes(checkpoint(4, 4, 524288).done());
  JobPlan jp = plan_jobs(cs, {0.5, 0.01, 12});
  REQUIRE(jp.jobs.size() == 1);
  const Job& j = jp.jobs[0];
  REQUIRE(j.pace_ops == 4);  // the traced writes per rank
  REQUIRE(j.pace_bs == 524288);
  CHECK(j.text.find("rate_iops") == std::string::npos);  // until a cycle is measured
  // A cycle of 2 ms: every 2.5 ms (400 writes a second), 0.5 s of it: 200 writes, 50 repetitions of the 4,
  // each a group of the 4 jobs on a new file after the last group ended, as a run of the program starts on
  // a new file: its first writes allocate (loops over one file rewrote cached pages: on tmpfs a third of the
  // program's cycle, -60% ext4 -> tmpfs and +220% back for checkpoint_sim).
  CHECK(j.pace_file_bytes == 4 * 524288);
  CHECK(jp.space == 50 * 4 * 524288);  // every pass's file stays until the run ends
  std::string t = paced_text(j, 2e-3, 0.5, "target");
  CHECK(t.find("rate_iops=400\n") != std::string::npos);
  CHECK(t.find("loops=50\n") == std::string::npos);
  CHECK(t.find("loops=1\n") != std::string::npos);
  CHECK(t.find("io_size=" + std::to_string(4 * 524288) + "\n") != std::string::npos);
  CHECK(t.find("\n[pass-50]\nstonewall\n") != std::string::npos);
  CHECK(t.find("[pass-51]") == std::string::npos);
  CHECK(t.find("\nfilename=shared-50.dat\n") != std::string::npos);
  CHECK(t.find("\nfilename=shared.dat\n") == t.rfind("\nfilename=shared.dat\n"));  // the first pass's only
  // At most 1 GiB of files a run: 2 passes of a 512 MiB file, one of a larger one.
  CHECK(paced_passes(int64_t(512) << 20) == 2);
  CHECK(paced_passes(int64_t(4) << 30) == 1);
  CHECK(paced_passes(4 * 524288) == kMaxPacedPasses);
  CHECK(t.find("# paced for the target:") < t.find("[global]"));
  CHECK(paced_text(j, 0, 0.5, "target") == j.text);        // nothing measured: unpaced
  CHECK(t.find("runtime=1000ms\n") != std::string::npos);  // room for the 200 paced writes (0.75 s)
  // A cycle of 0.5 s: a write a second; the runtime lets the traced 4 writes and their fsyncs through.
  std::string slow = paced_text(j, 0.5, 0.5, "target");
  CHECK(slow.find("rate_iops=1\n") != std::string::npos);
  CHECK(slow.find("loops=1\n") != std::string::npos);
  CHECK(slow.find("runtime=7500ms\n") != std::string::npos);
  // The run measuring the cycle in step: 4 x the unpaced cycle (every 8 ms: 125 writes a second).
  std::string calibration = paced_text(j, 2e-3, 0.5, "reference", kCalibrationMargin);
  CHECK(calibration.find("rate_iops=125\n") != std::string::npos);
  CHECK(calibration.find("# paced for the reference:") != std::string::npos);
  // The retry of a paced run that made no fsync: one pass of the traced 4 writes, not the paced text's 50
  // repetitions over the job's passes (a fraction of a pass ends before its fsync).
  std::string once = one_pass_text(j, t);
  CHECK(once.find("[pass-2]") == std::string::npos);
  CHECK(once.find("io_size=" + std::to_string(4 * 524288) + "\n") != std::string::npos);
  CHECK(once.find("loops=1\n") != std::string::npos);
  CHECK(once.find("runtime=") == std::string::npos);
  // A file per rank: each rank's own fsyncs, nothing to keep in step.
  PlanMaker pm(2);
  int32_t f[2] = {pm.file("/work/a.dat"), pm.file("/work/b.dat")};
  for (int r = 0; r < 2; ++r)
    for (int s = 0; s < 4; ++s) {
      pm.call(r, Kind::pwrite64, {{arg::handle, 6}, {arg::file, f[r]}, {arg::offset, 0}, {arg::count, 4096}}, 20000, 0,
              4096);
      pm.call(r, Kind::fsync, {{arg::handle, 6}, {arg::file, f[r]}}, 900000);
    }
  JobPlan own = plan_jobs(derive_classes(pm.done()), {0.5, 0.01, 12});
  REQUIRE(own.jobs.size() == 1);
  CHECK(own.jobs[0].pace_ops == 0);
}

TEST_CASE("fio's JSON: a write's cycle, its syncs included", "[predict]") {
  auto j = nlohmann::json::parse(R"({"jobs": [
    {"write": {"total_ios": 10, "lat_ns": {"mean": 1e6}}, "sync": {"total_ios": 9, "lat_ns": {"mean": 2e6}}}]})");
  REQUIRE(cycle_seconds(j) == Approx((10 * 1e-3 + 9 * 2e-3) / 10));
  // Two jobs' writes to one file serialize: the later one's take 4/3 of the mean (it waits for the other's).
  REQUIRE(cycle_seconds(j, 2) == Approx((10 * 1e-3 * 4 / 3 + 9 * 2e-3) / 10));
  REQUIRE(cycle_seconds(j, 4) == Approx((10 * 1e-3 * 8 / 5 + 9 * 2e-3) / 10));
  REQUIRE(cycle_seconds(j, 0) == cycle_seconds(j));
  REQUIRE(cycle_seconds(nlohmann::json::parse(R"({"jobs": []})")) == 0);
  REQUIRE_THROWS(cycle_seconds(nlohmann::json::parse("[]")));
}

TEST_CASE("fio jobs: sequential synced writes to a file per rank: fresh files, the traced cadence", "[predict]") {
  PlanMaker pm(2);
  int32_t f[2] = {pm.file("/work/a.dat"), pm.file("/work/b.dat")};
  for (int r = 0; r < 2; ++r)
    for (int s = 0; s < 8; ++s) {
      pm.call(r, Kind::pwrite64, {{arg::handle, 6}, {arg::file, f[r]}, {arg::offset, s * 4096}, {arg::count, 4096}},
              20000, 0, 4096);
      if (s % 2) pm.call(r, Kind::fsync, {{arg::handle, 6}, {arg::file, f[r]}}, 900000);
    }
  Classes cs = derive_classes(pm.done());
  JobPlan jp = plan_jobs(cs, {0.5, 0.01, 12});
  REQUIRE(jp.jobs.size() == 1);
  CHECK(jp.jobs[0].text.find("norandommap") == std::string::npos);
  // 8 writes a rank and one more, after which fio issues the 4th fsync: fio's own count is the syncs made.
  for (const char* want : {"rw=write\n", "size=36864\n", "fsync=2\n", "numjobs=2\n", "unlink_each_loop=1\n"})
    CHECK(jp.jobs[0].text.find(want) != std::string::npos);
}

TEST_CASE("fio's JSON: time per operation by section, weighted by operations", "[predict]") {
  auto j = nlohmann::json::parse(R"({"jobs": [
    {"write": {"total_ios": 10, "lat_ns": {"mean": 2000.0}}, "sync": {"total_ios": 10, "lat_ns": {"mean": 5e6}},
     "read": {"total_ios": 0, "lat_ns": {"mean": 0.0}}},
    {"write": {"total_ios": 30, "lat_ns": {"mean": 0.0}, "clat_ns": {"mean": 6000.0}}}]})");
  auto per_op = per_op_seconds(j);
  REQUIRE(per_op.size() == 2);
  REQUIRE(per_op["write"] == Approx((10 * 2000.0 + 30 * 6000.0) / 40 / 1e9));
  REQUIRE(per_op["sync"] == Approx(5e-3));
  REQUIRE_THROWS(per_op_seconds(nlohmann::json::parse(R"({"fio": 1})")));
  // fio's 38 syncs for 20 writes with fsync=1 (one more per pass over the file): 20 syncs asked for.
  auto passes = nlohmann::json::parse(R"({"jobs": [
    {"write": {"total_ios": 20, "lat_ns": {"mean": 1e6}}, "sync": {"total_ios": 38, "lat_ns": {"mean": 4e6}}}]})");
  REQUIRE(per_op_seconds(passes, 1)["sync"] == Approx(38 * 4e-3 / 20));
  REQUIRE(per_op_seconds(passes, 4)["sync"] == Approx(38 * 4e-3 / 5));
  REQUIRE(per_op_seconds(passes)["sync"] == Approx(4e-3));
  REQUIRE(per_op_seconds(passes, 1)["write"] == Approx(1e-3));
}

TEST_CASE("fio's JSON: reads and writes by their median latency, syncs by their mean", "[predict]") {
  // A run whose mean is pulled up by a few writes preempted for milliseconds: the median is the write's cost.
  auto j = nlohmann::json::parse(R"({"jobs": [
    {"write": {"total_ios": 100, "lat_ns": {"mean": 9e5},
               "clat_ns": {"mean": 9e5, "percentile": {"10.000000": 2e5, "50.000000": 3e5, "99.000000": 9e6}}},
     "read": {"total_ios": 10, "lat_ns": {"mean": 5e3}, "clat_ns": {"percentile": {"50.000000": 4e3}}},
     "sync": {"total_ios": 100, "lat_ns": {"mean": 4e6},
              "clat_ns": {"mean": 4e6, "percentile": {"50.000000": 1e6}}}}]})");
  auto per_op = per_op_seconds(j);
  REQUIRE(per_op["write"] == Approx(3e-4));
  REQUIRE(per_op["read"] == Approx(4e-6));
  REQUIRE(per_op["sync"] == Approx(4e-3));  // a sync's cost is what the syncs took in all
  // Jobs reported apart: their medians weighted by their operations.
  auto two = nlohmann::json::parse(R"({"jobs": [
    {"write": {"total_ios": 30, "lat_ns": {"mean": 1e6}, "clat_ns": {"percentile": {"50.000000": 1e5}}}},
    {"write": {"total_ios": 10, "lat_ns": {"mean": 1e6}, "clat_ns": {"percentile": {"50.000000": 5e5}}}}]})");
  REQUIRE(per_op_seconds(two)["write"] == Approx((30 * 1e5 + 10 * 5e5) / 40 / 1e9));
}

namespace {

// IOR's file per process with -e: each rank writes `writes` blocks of `bs` to its own file, one fsync at the end.
Classes ior_fpp(int ranks, int writes, int64_t bs) {
  PlanMaker pm(ranks);
  for (int r = 0; r < ranks; ++r) {
    int32_t f = pm.file("/work/ior." + std::to_string(r));
    pm.call(r, Kind::open, {{arg::handle, 6}, {arg::file, f}, {arg::flags, O_WRONLY | O_CREAT}}, 30000, 0, 6);
    for (int i = 0; i < writes; ++i)
      pm.call(r, Kind::pwrite64, {{arg::handle, 6}, {arg::file, f}, {arg::offset, i * bs}, {arg::count, bs}}, 2000000,
              0, bs);
    pm.call(r, Kind::fsync, {{arg::handle, 6}, {arg::file, f}}, 90000000);
    pm.call(r, Kind::close, {{arg::handle, 6}, {arg::file, f}}, 20000);
  }
  return derive_classes(pm.done());
}

bool has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

TEST_CASE("fio jobs: a file per rank synced once: the traced volume, ranks and cadence", "[predict]") {
  Classes cs = ior_fpp(2, 64, 1 << 20);
  REQUIRE(find(cs, "write 1MiB sequential per-process fsync/64").count == 128);
  JobOptions opt;
  opt.seconds = 0.1;  // the traced pass (64 x 2 ms) is longer: one pass
  JobPlan jp = plan_jobs(cs, opt);
  REQUIRE(jp.jobs.size() == 1);
  const Job& j = jp.jobs[0];
  // 64 MiB a rank and one write more, so that fio makes (and counts) the fsync after the 64th.
  for (const char* line : {"rw=write", "bs=1048576", "size=68157440", "numjobs=2", "fsync=64", "loops=1",
                           "unlink_each_loop=1", "ioengine=psync"})
    CHECK(has(j.text, line));
  CHECK(j.text.find("runtime") == std::string::npos);
  CHECK(j.text.find("io_size") == std::string::npos);
  REQUIRE(j.per_rank_ops == 64);
  REQUIRE(j.traced_per_rank_ops == 64);
  REQUIRE(j.used.size() == 2);  // the writes and their fsync
  REQUIRE(jp.space == 2 * 65 * (1 << 20));
  // Capped (--max-volume, for tests): 8 MiB a rank, still an fsync at the end of each pass, the cap said.
  opt.max_volume = 8 << 20;
  const Job small = plan_jobs(cs, opt).jobs[0];
  for (const char* line : {"size=9437184", "fsync=8", "numjobs=2"}) CHECK(has(small.text, line));
  CHECK(small.text.find("capped: the program made 64 calls a rank") != std::string::npos);
  // A short pass repeated to --job-seconds, fio's runtime (twice that) ending the repetitions, not a pass.
  opt.seconds = 2;
  const Job repeated = plan_jobs(cs, opt).jobs[0];
  for (const char* line : {"loops=125", "runtime=4000ms", "size=9437184"}) CHECK(has(repeated.text, line));
  // A run that made no fsync within that limit runs again as one pass, with no limit.
  std::string once = one_pass_text(repeated, repeated.text);
  CHECK(has(once, "loops=1"));
  CHECK(has(once, "fsync=8"));
  CHECK(once.find("runtime") == std::string::npos);
  // A checkpoint's: its io_size is one pass of the traced writes.
  const Job ckpt = plan_jobs(derive_classes(checkpoint(4, 4, 524288).done()), {0.5, 0.01, 12}).jobs[0];
  CHECK(has(one_pass_text(ckpt, ckpt.text), "io_size=" + std::to_string(4 * 524288)));
  REQUIRE(small.per_rank_ops == 8);
  // fio's output for such a job counts its syncs itself: 2 jobs x 1 pass.
  auto out = nlohmann::json::parse(R"({"jobs": [
    {"write": {"total_ios": 130, "lat_ns": {"mean": 2e6}}, "sync": {"total_ios": 2, "lat_ns": {"mean": 9e7}}}]})");
  REQUIRE(per_op_seconds(out, 0, true)["sync"] == Approx(0.09));
}

TEST_CASE("metadata classes: mkdir, rmdir and rename have their own; each gets a metadata job", "[predict]") {
  PlanMaker pm(2);
  for (int r = 0; r < 2; ++r) {
    int32_t d = pm.file("/work/md/dir." + std::to_string(r));
    pm.call(r, Kind::mkdir, {{arg::file, d}}, 20000);
    for (int i = 0; i < 30; ++i) {
      int32_t f = pm.file("/work/md/f." + std::to_string(r) + "." + std::to_string(i));
      pm.call(r, Kind::open, {{arg::handle, 6}, {arg::file, f}, {arg::flags, O_WRONLY | O_CREAT}}, 40000, 0, 6);
      pm.call(r, Kind::close, {{arg::handle, 6}, {arg::file, f}}, 5000);
      pm.call(r, Kind::stat, {{arg::file, f}}, 3000);
      pm.call(r, Kind::rename, {{arg::file, f}}, 15000);
      pm.call(r, Kind::unlink, {{arg::file, f}}, 25000);
    }
    pm.call(r, Kind::rmdir, {{arg::file, d}}, 20000);
  }
  Classes cs = derive_classes(pm.done());
  for (const char* label : {"mkdir per-process", "rmdir per-process", "rename per-process"})
    REQUIRE(find(cs, label).count == 2 * (std::string(label) == "rename per-process" ? 30 : 1));
  JobOptions opt;
  opt.min_share = 0;
  opt.seconds = 1e-5;  // shorter than any class's traced calls: one pass
  JobPlan jp = plan_jobs(cs, opt);
  REQUIRE(jp.jobs.size() == 7);  // create, close, stat, rename, unlink, mkdir, rmdir
  for (size_t i = 0; i < cs.classes.size(); ++i) {
    REQUIRE(jp.unmeasured[i].empty());
    const Job& j = jp.jobs[size_t(jp.job_of[i])];
    const IoClass& c = cs.classes[i];
    // The op, the ranks that did it, the calls each made, passes, and the seconds that end repetitions.
    std::vector<std::string> args{std::string(op_name(c.key.op)), "2", std::to_string(c.count / 2), "1", "1e-05"};
    REQUIRE(j.meta_args == args);
    REQUIRE(jp.section[i] == op_name(c.key.op));
  }
  opt.max_meta_ops = 10;
  JobPlan capped = plan_jobs(cs, opt);
  REQUIRE(capped.jobs[size_t(capped.job_of[0])].meta_args[2] == "10");
}

TEST_CASE("a class no benchmark measures is named and widens the interval by its share", "[predict]") {
  PlanMaker pm(1);
  int32_t f = pm.file("/work/a");
  pm.call(0, Kind::pwrite64, {{arg::handle, 6}, {arg::file, f}, {arg::offset, 0}, {arg::count, 4096}}, 600000, 0, 4096);
  pm.call(0, Kind::ftruncate, {{arg::handle, 6}, {arg::file, f}}, 400000);
  Classes cs = derive_classes(pm.done());
  JobPlan jp = plan_jobs(cs, {});
  size_t other = class_label(cs.classes[0].key) == "other per-process" ? 0 : 1;
  REQUIRE(jp.unmeasured[other].find("no benchmark") != std::string::npos);
  std::vector<std::optional<Runs>> runs(2);
  runs[1 - other] = Runs{{1.0, 1.0, 1.0}, {0.5, 0.5, 0.5}};  // measured: ratio 0.5, no spread
  Prediction p = predict_io(cs, runs);
  REQUIRE(p.unmeasured_s == Approx(0.0004));
  REQUIRE(p.predicted_io_s == Approx(0.0005));  // the unmeasured class at the measured ratio
  // It may scale as the measured class did or not at all: [0.5, 1] x its traced time.
  REQUIRE(p.low_s == Approx(0.0003 + 0.0002));
  REQUIRE(p.high_s == Approx(0.0003 + 0.0004));
  REQUIRE(p.width() == Approx(0.0002 / 0.0005));
  REQUIRE(p.spread.empty());
  runs[1 - other] = Runs{{1.0, 1.0, 1.0}, {0.3, 0.5, 0.7}};  // 40% run to run: flagged
  REQUIRE(predict_io(cs, runs).spread == std::vector<size_t>{1 - other});
}

namespace {
// Four ranks each make 10 writes of 64 KiB (1 ms each) to a file of their own, after `delay(rank)` of barrier.
template <typename Delay>
Classes staggered(Delay delay) {
  PlanMaker pm(4);
  std::vector<int32_t> files;
  for (int r = 0; r < 4; ++r) files.push_back(pm.file("/work/out." + std::to_string(r)));
  for (int r = 0; r < 4; ++r) {
    pm.call(r, Kind::MPI_Barrier, {{arg::comm, 0}}, delay(r));
    for (int i = 0; i < 10; ++i)
      pm.call(r, Kind::pwrite64,
              {{arg::handle, 5}, {arg::file, files[size_t(r)]}, {arg::offset, i * 65536}, {arg::count, 65536}}, 1000000,
              0, 65536);
  }
  return derive_classes(pm.done());
}
}  // namespace

TEST_CASE("concurrency: the ranks in a class at once on the trace's clocks, not every rank that did it", "[predict]") {
  // All four at once: four fio jobs of 10 writes.
  Classes together = staggered([](int) { return 1000; });
  const IoClass& all = find(together, "write 64KiB sequential per-process");
  REQUIRE(all.ranks.size() == 4);
  REQUIRE(all.peak == 4);
  REQUIRE(all.at_once == Approx(4));
  REQUIRE(all.concurrency() == 4);
  REQUIRE(plan_jobs(together, {}).jobs[0].text.find("numjobs=4\n") != std::string::npos);
  // One after the other (each waits 20 ms more than the last): one job of all 40 writes.
  Classes serial = staggered([](int r) { return 1000 + r * 20000000; });
  const IoClass& one = find(serial, "write 64KiB sequential per-process");
  REQUIRE(one.ranks.size() == 4);
  REQUIRE(one.peak == 1);
  REQUIRE(one.at_once == Approx(1));
  REQUIRE(one.concurrency() == 1);
  JobPlan jp = plan_jobs(serial, {});
  REQUIRE(jp.jobs[0].text.find("numjobs=1\n") != std::string::npos);
  REQUIRE(jp.jobs[0].per_rank_ops == 40);
  // Two pairs, one after the other: two at once, 20 writes each.
  Classes pairs = staggered([](int r) { return 1000 + (r / 2) * 20000000; });
  REQUIRE(find(pairs, "write 64KiB sequential per-process").concurrency() == 2);
  REQUIRE(plan_jobs(pairs, {}).jobs[0].per_rank_ops == 20);
  // Overlapping in part (rank r starts 6 ms after r - 1): the mean a write saw, between one and the peak.
  Classes half = staggered([](int r) { return 1000 + r * 6000000; });
  const IoClass& h = find(half, "write 64KiB sequential per-process");
  REQUIRE(h.peak == 2);
  // 16 ms of one rank alone, 12 ms of two at once: (16 + 4 x 12) / (16 + 2 x 12).
  REQUIRE(h.at_once == Approx(64.0 / 40.0).epsilon(0.01));
  REQUIRE(h.concurrency() == 2);
}

TEST_CASE("fio jobs: synced writes of more ranks than jobs: each job syncs the dirty volume of its ranks",
          "[predict]") {
  // 16 ranks of 64 writes and an fsync each, 4 at once: each fio job stands for 4 ranks, and at an fsync the
  // page cache holds what all 16 wrote since their last one.
  Classes cs = ior_fpp(16, 64, 65536);
  // The writes' concurrency is the job's (their fsyncs follow them).
  IoClass& w = const_cast<IoClass&>(find(cs, "write 64KiB sequential per-process fsync/64"));
  w.fitted_at_once = 4;
  JobOptions opt;
  opt.seconds = 0.1;
  const Job j = plan_jobs(cs, opt).jobs[0];
  for (std::string line : {"numjobs=4", "fsync=256", "size=16842752"}) CHECK(has(j.text, line));
  // A rank's fsync: of the 4 ranks' queued on the device, the mean, (4 + 1) / 2 of one rank's writes.
  CHECK(j.sync_ranks == 4);
  CHECK(rank_sync_share(j.sync_ranks) == Approx(5.0 / 8));
  CHECK(rank_sync_share(1) == 1);
  // As many jobs as ranks: the traced cadence.
  w.fitted_at_once = 16;
  CHECK(has(plan_jobs(cs, opt).jobs[0].text, "fsync=64"));
  CHECK(plan_jobs(cs, opt).jobs[0].sync_ranks == 1);
  // Three at once: 5.33 ranks a job, an fsync every 341 writes.
  w.fitted_at_once = 3;
  CHECK(has(plan_jobs(cs, opt).jobs[0].text, "fsync=341"));
}
