// The I/O operation classes mpior-predict derives from a plan, its fio jobs,
// fio's JSON and the prediction's arithmetic (issue 17).
#include <fcntl.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "predict/jobs.hpp"
#include "predict/op_classes.hpp"
#include "predict/predict.hpp"
#include "trace/builder.hpp"

using namespace mpior;
using namespace mpior::predict;
using trace::Kind;
namespace arg = trace::arg;

namespace {

// One stream per rank, built with the real StreamBuilder; local file ids are
// the plan's (files 0-2 are the standard streams).
struct PlanMaker {
  explicit PlanMaker(int ranks) : builders(size_t(ranks)), now(size_t(ranks), 1000) {
    plan.ranks.resize(size_t(ranks));
    for (int i = 0; i < 3; ++i) file("<std>");
  }
  int32_t file(const std::string& path) {
    plan.files.push_back({path});
    for (auto& r : plan.ranks) r.files.push_back(int32_t(plan.files.size() - 1));
    return int32_t(plan.files.size() - 1);
  }
  PlanMaker& call(int rank, Kind k, std::initializer_list<std::pair<int, int64_t>> args, int64_t dur, uint8_t depth = 0,
                  int64_t ret = 0) {
    trace::RawEvent ev;
    ev.kind = k;
    ev.depth = depth;
    ev.ret = ret;
    for (auto [slot, v] : args) ev.args[size_t(slot)] = v;
    ev.start = now[size_t(rank)] + 100;
    ev.end = ev.start + dur;
    if (depth == 0) now[size_t(rank)] = ev.end;
    builders[size_t(rank)].append(ev);
    return *this;
  }
  const trace::Plan& done() {
    plan.streams.clear();
    for (size_t r = 0; r < builders.size(); ++r) plan.streams.push_back(builders[r].snapshot(int32_t(r), 0));
    return plan;
  }
  trace::Plan plan;
  std::vector<trace::StreamBuilder> builders;
  std::vector<int64_t> now;
};

const IoClass& find(const Classes& cs, const std::string& label) {
  for (const IoClass& c : cs.classes)
    if (class_label(c.key) == label) return c;
  FAIL("no class " << label);
  throw 0;
}

// checkpoint_sim's shape: rank 0 creates the shared file, every rank opens
// it and rewrites its block with an fsync after each write.
PlanMaker checkpoint(int ranks, int steps, int64_t block, int64_t sync_ns = 900000) {
  PlanMaker pm(ranks);
  int32_t f = pm.file("/work/checkpoint.dat");
  pm.call(0, Kind::open, {{arg::handle, 5}, {arg::file, f}, {arg::flags, O_WRONLY | O_CREAT}}, 3000, 0, 5);
  pm.call(0, Kind::close, {{arg::handle, 5}, {arg::file, f}}, 1000);
  for (int r = 0; r < ranks; ++r) {
    pm.call(r, Kind::open, {{arg::handle, 6}, {arg::file, f}, {arg::flags, O_WRONLY}}, 2000, 0, 6);
    for (int s = 0; s < steps; ++s) {
      pm.call(r, Kind::MPI_Barrier, {{arg::comm, 0}}, 50000);
      pm.call(r, Kind::pwrite64, {{arg::handle, 6}, {arg::file, f}, {arg::offset, r * block}, {arg::count, block}},
              400000, 0, block);
      pm.call(r, Kind::fsync, {{arg::handle, 6}, {arg::file, f}}, sync_ns);
    }
    pm.call(r, Kind::close, {{arg::handle, 6}, {arg::file, f}}, 1000);
  }
  return pm;
}

// One class of 1 s of traced I/O, all the traced I/O.
Classes one_class_of_a_second() {
  Classes cs;
  cs.classes.resize(1);
  cs.classes[0].time_ns = 1'000'000'000;
  cs.io_ns = 1'000'000'000;
  return cs;
}

}  // namespace

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
  REQUIRE(cs.classes.size() == 4);
  REQUIRE(find(cs, "write 4KiB sequential per-process").count == 1);  // the MPI-IO call, not the pwrite under it
  REQUIRE(find(cs, "stat per-process").count == 1);
  REQUIRE(find(cs, "unlink per-process").count == 1);
  REQUIRE(find(cs, "other per-process").count == 1);
  REQUIRE(cs.io_ns == 7000 + 800 + 900 + 100);
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
  // The traced work (4 writes of 512 KiB per rank, an fsync after each, 400 us a write) to about 0.5 s: 313 times.
  for (const char* want : {"io_size=656408576"}) CHECK(t.find(want) != std::string::npos);
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
  REQUIRE(jp.space == 4 * 524288);
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
  // A cycle of 2 ms: every 2.5 ms (400 writes a second), 0.5 s of it: 200 writes, 50 repetitions of the 4.
  std::string t = paced_text(j, 2e-3, 0.5, "target");
  CHECK(t.find("rate_iops=400\n") != std::string::npos);
  CHECK(t.find("io_size=" + std::to_string(50 * 4 * 524288) + "\n") != std::string::npos);
  CHECK(t.find("io_size=656408576") == std::string::npos);
  CHECK(t.find("# paced for the target:") < t.find("[global]"));
  CHECK(paced_text(j, 0, 0.5, "target") == j.text);        // nothing measured: unpaced
  CHECK(t.find("runtime=1000ms\n") != std::string::npos);  // room for the 200 paced writes (0.75 s)
  // A cycle of 0.5 s: a write a second; the runtime lets the traced 4 writes and their fsyncs through.
  std::string slow = paced_text(j, 0.5, 0.5, "target");
  CHECK(slow.find("rate_iops=1\n") != std::string::npos);
  CHECK(slow.find("io_size=" + std::to_string(4 * 524288) + "\n") != std::string::npos);
  CHECK(slow.find("runtime=7500ms\n") != std::string::npos);
  // The run measuring the cycle in step: 4 x the unpaced cycle (every 8 ms: 125 writes a second).
  std::string calibration = paced_text(j, 2e-3, 0.5, "reference", kCalibrationMargin);
  CHECK(calibration.find("rate_iops=125\n") != std::string::npos);
  CHECK(calibration.find("# paced for the reference:") != std::string::npos);
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

TEST_CASE("prediction: a synced write and its fsync by the ratio of the write's cycle", "[predict]") {
  Classes cs;
  cs.classes.resize(3);
  ClassKey w{Op::write, 2097152, true, true, 1, false};
  ClassKey f = w;
  f.op = Op::sync;
  cs.classes[0].key = w;
  cs.classes[0].time_ns = 20'000'000;  // 40 writes, 0.5 ms each
  cs.classes[0].count = 40;
  cs.classes[1].key = f;
  cs.classes[1].time_ns = 40'000;  // 40 fsyncs, 1 us each (tmpfs)
  cs.classes[1].count = 40;
  cs.classes[2].key = {Op::write, 4096, false, false, 0, false};  // unsynced: its own ratio
  cs.classes[2].time_ns = 1'000'000;
  cs.io_ns = 21'040'000;
  std::vector<std::optional<Runs>> runs(3);
  runs[0] = Runs{{2e-4, 2e-4, 2e-4}, {1e-4, 1e-4, 1e-4}};  // the write alone: ext4 half tmpfs's
  runs[1] = Runs{{1e-6, 1e-6, 1e-6}, {1.9e-3, 1.9e-3, 1.9e-3}};
  runs[2] = Runs{{1e-5, 1e-5, 1e-5}, {2e-5, 2e-5, 2e-5}};
  Prediction p = predict_io(cs, runs);
  double cycle = (1e-4 + 1.9e-3) / (2e-4 + 1e-6);  // a write and its fsync: 2 ms on the target, 0.201 ms here
  for (size_t i : {0, 1}) {
    CHECK(p.classes[i].cycle_basis);
    CHECK(!p.classes[i].per_op_basis);
    CHECK(p.classes[i].ratio == Approx(cycle));
  }
  CHECK(p.classes[0].predicted_s == Approx(0.02 * cycle));
  CHECK(p.classes[1].predicted_s == Approx(40e-6 * cycle));
  CHECK(p.classes[0].runs.target == std::vector<double>{1e-4, 1e-4, 1e-4});  // its own runs reported
  CHECK(!p.classes[2].cycle_basis);
  CHECK(p.classes[2].ratio == Approx(2.0));
  CHECK(p.predicted_io_s == Approx((0.02 + 40e-6) * cycle + 0.002));
  // The runs' means where fio reported them: the write's median missed the preemptions a mean has.
  runs[0] = Runs{{2e-4, 2e-4, 2e-4}, {1e-4, 1e-4, 1e-4}, {2e-4, 2e-4, 2e-4}, {3e-4, 3e-4, 3e-4}};
  runs[1] = Runs{{1e-6, 1e-6, 1e-6}, {1.9e-3, 1.9e-3, 1.9e-3}, {1e-6, 1e-6, 1e-6}, {1.9e-3, 1.9e-3, 1.9e-3}};
  Prediction means = predict_io(cs, runs);
  CHECK(means.classes[0].ratio == Approx((3e-4 + 1.9e-3) / (2e-4 + 1e-6)));
  REQUIRE(means.classes[0].cycle_runs.target.size() == 3);
  CHECK(means.classes[0].cycle_runs.target[0] == Approx(2.2e-3));
  // Without its fsync measured, a synced write keeps its own ratio.
  runs[1].reset();
  Prediction alone = predict_io(cs, runs);
  CHECK(!alone.classes[0].cycle_basis);
  CHECK(alone.classes[0].ratio == Approx(0.5));
}

TEST_CASE("prediction: ratio x traced time, an interval from the spreads, a fallback ratio", "[predict]") {
  Classes cs;
  cs.classes.resize(2);
  cs.classes[0].time_ns = 2'000'000'000;
  cs.classes[1].time_ns = 1'000'000'000;
  cs.io_ns = 3'000'000'000;
  std::vector<std::optional<Runs>> runs(2);
  runs[0] = Runs{{1.0, 1.0, 1.0}, {0.4, 0.5, 0.6}};
  Prediction p = predict_io(cs, runs);
  REQUIRE(p.classes[0].ratio == Approx(0.5));
  // One run's spread: the means' (0.2 / sqrt 3) and the target's own run to run (0.2), in quadrature.
  double sd = std::sqrt(0.04 / 3 + 0.04);
  REQUIRE(p.classes[0].rel_sd == Approx(sd));
  REQUIRE(p.classes[0].reference_rel_sd == 0);
  REQUIRE(p.classes[0].target_rel_sd == Approx(0.2));
  REQUIRE(p.fio_target_rel_sd == Approx(0.2));  // the only measured class
  REQUIRE(p.classes[0].predicted_s == Approx(1.0));
  // Multiplicative, never 0; Student's t for a spread of 3 runs: 4.30 standard deviations, not 2.
  REQUIRE(p.classes[0].low_s == Approx(1.0 / (1 + 4.30 * sd)));
  REQUIRE(p.classes[0].high_s == Approx(1.0 * (1 + 4.30 * sd)));
  REQUIRE(!p.classes[1].measured);
  REQUIRE(p.classes[1].ratio == Approx(0.5));
  REQUIRE(p.predicted_io_s == Approx(1.5));
  REQUIRE(p.low_s <= p.predicted_io_s);
  REQUIRE(p.high_s >= p.predicted_io_s);
  REQUIRE(p.traced_io_s == Approx(3.0));
  REQUIRE(p.dominant == std::vector<size_t>{0, 1});
  REQUIRE(std::isfinite(p.high_s));
  // The traced time is one run on the reference: its run-to-run spread counts as the target's does.
  runs[0] = Runs{{0.8, 1.0, 1.2}, {0.5, 0.5, 0.5}};
  Prediction ref = predict_io(cs, runs);
  REQUIRE(ref.classes[0].reference_rel_sd == Approx(0.2));
  REQUIRE(ref.classes[0].rel_sd == Approx(sd));
  // Steady typical times (fio's medians) whose runs' means vary: the means' spread is the run-to-run spread.
  runs[0] = Runs{{1.0, 1.0, 1.0}, {0.5, 0.5, 0.5}, {1.6, 2.0, 2.4}, {0.6, 0.6, 0.6}};
  Prediction means = predict_io(cs, runs);
  REQUIRE(means.classes[0].ratio == Approx(0.5));  // from the typical times
  REQUIRE(means.classes[0].reference_rel_sd == Approx(0.2));
  REQUIRE(means.classes[0].target_rel_sd == 0);
  REQUIRE(means.classes[0].rel_sd == Approx(sd));
  auto wide = nlohmann::json::parse(R"({"jobs": [
    {"write": {"total_ios": 100, "lat_ns": {"mean": 9e5}, "clat_ns": {"percentile": {"50.000000": 3e5}}}}]})");
  REQUIRE(per_op_seconds(wide, 0, true)["write"] == Approx(9e-4));
  // Medians of the runs: one run slowed by other work on the machine does not move the ratio.
  runs[0] = Runs{{1.0, 1.0, 1.0, 1.0, 3.0}, {0.5, 0.5, 0.5, 1.5, 0.5}};
  Prediction burst = predict_io(cs, runs);
  REQUIRE(burst.classes[0].ratio == Approx(0.5));
  REQUIRE(burst.classes[0].high_s >= 3.0);           // that run's own prediction: 2 s x 1.5 / 1.0
  REQUIRE(burst.classes[0].low_s <= 2 * 0.5 / 3.0);  // and the other's
  REQUIRE(median({}) == 0);
  REQUIRE(median({3.0, 1.0}) == Approx(2.0));
  // And the interval holds at least each repetition's own prediction (2 s x 0.9 / 0.3, 2 s x 0.1 / 1.7).
  runs[0] =
      Runs{{0.3, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.7}, {0.9, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.1}};
  Prediction rep = predict_io(cs, runs);
  REQUIRE(rep.classes[0].predicted_s == Approx(1.0));
  REQUIRE(rep.classes[0].high_s == Approx(6.0));
  REQUIRE(rep.classes[0].low_s == Approx(2 * 0.1 / 1.7));
}

TEST_CASE("a class the reference does in microseconds: count x the target's time per op, not a ratio", "[predict]") {
  Classes cs;
  cs.classes.resize(3);
  cs.classes[0].key.op = Op::sync;  // fsync on tmpfs: 2 us traced (the tracer's cost as much as tmpfs'), 0.5 us in fio
  cs.classes[0].count = 40;
  cs.classes[0].time_ns = 80'000;
  cs.classes[1].count = 40;
  cs.classes[1].time_ns = 40'000'000;
  cs.classes[2].count = 3;  // not measured: takes the ratio classes' ratio
  cs.classes[2].time_ns = 30'000;
  cs.io_ns = 40'110'000;
  std::vector<std::optional<Runs>> runs(3);
  runs[0] = Runs{{0.4e-6, 0.5e-6, 0.6e-6}, {8e-3, 10e-3, 12e-3}};
  runs[1] = Runs{{1e-3, 1e-3}, {0.5e-3, 0.5e-3}};
  Prediction p = predict_io(cs, runs);
  REQUIRE(p.classes[0].per_op_basis);
  REQUIRE(p.classes[0].predicted_s == Approx(40 * 10e-3));             // not 80 us x 20,000
  REQUIRE(p.classes[0].rel_sd == Approx(std::sqrt(0.04 / 3 + 0.04)));  // the target's spread only
  REQUIRE(!p.classes[1].per_op_basis);
  REQUIRE(p.classes[1].predicted_s == Approx(0.02));
  REQUIRE(p.classes[2].ratio == Approx(0.5));  // the per-op class's 5,000 is no ratio for others
  // The widest spread, at the widest factor (class 1's 2 runs: t = 12.71), from its traced time: unmeasured,
  // it may not scale at all.
  REQUIRE(p.classes[2].high_s == Approx(1.0 * 30e-6 * (1 + 12.71 * std::sqrt(0.04 / 3 + 0.04))));
  REQUIRE(p.classes[2].low_s == Approx(0.5 * 30e-6 / (1 + 12.71 * std::sqrt(0.04 / 3 + 0.04))));
  REQUIRE(p.low_s > 0.4 / 2);
  REQUIRE(p.high_s < 0.42 * 2);
  JobPlan jp{
      {Job{"job-1", "", {0, 1}, 0, 0, 0, 0, 0, 1, {}}}, {0, 0, -1}, {"sync", "write", ""}, {"", "", "below 1%"}, 0};
  auto j = report_json({}, cs, jp, p);
  REQUIRE(j["classes"][0]["basis"] == "target time per op");
  REQUIRE(j["classes"][1]["basis"] == "ratio");
  REQUIRE(j["classes"][2]["basis"] == "fallback ratio");
  runs[0] = Runs{{4e-6, 5e-6, 6e-6}, {8e-6, 10e-6, 12e-6}};  // microseconds on both (small writes): a ratio of 2
  Prediction small = predict_io(cs, runs);
  REQUIRE(!small.classes[0].per_op_basis);
  REQUIRE(small.classes[0].predicted_s == Approx(2 * 80e-6));
}

TEST_CASE("the spread factor: Student's t for the runs the spread came from, at least 2", "[predict]") {
  REQUIRE(spread_factor(2) == Approx(12.71));
  REQUIRE(spread_factor(3) == Approx(4.30));
  REQUIRE(spread_factor(5) == Approx(2.78));
  REQUIRE(spread_factor(12) == Approx(2.13));
  REQUIRE(spread_factor(1000) == 2.0);
  REQUIRE(spread_factor(0) == Approx(12.71));
}

TEST_CASE("--check: the target's run-to-run spread widens the interval in quadrature", "[predict]") {
  Classes cs = one_class_of_a_second();
  std::vector<std::optional<Runs>> runs(1);
  runs[0] = Runs{{1.0, 1.0, 1.0}, {0.4, 0.5, 0.6}};  // ratio 0.5, 3 runs: h = 4.30 sqrt(0.04 / 3 + 0.04)
  Prediction p = predict_io(cs, runs);
  double h = 4.30 * std::sqrt(0.04 / 3 + 0.04);
  REQUIRE(p.fio_low_s == Approx(0.5 / (1 + h)));
  REQUIRE(p.fio_high_s == Approx(0.5 * (1 + h)));
  widen_by_target_spread(p, {0.425, 0.5, 0.575});  // 15%: 3 replays, 4.30 x 15%, with the fio's h in quadrature
  REQUIRE(p.target_rel_sd == Approx(0.15));
  REQUIRE(p.low_s == Approx(0.5 / (1 + std::hypot(h, 4.30 * 0.15))));
  REQUIRE(p.high_s == Approx(0.5 * (1 + std::hypot(h, 4.30 * 0.15))));
  REQUIRE(p.fio_low_s == Approx(0.5 / (1 + h)));
  widen_by_target_spread(p, {0.0, 1.0, 2.0});  // never zero: the bounds are multiplicative
  REQUIRE(p.target_rel_sd == Approx(1.0));
  REQUIRE(p.low_s == Approx(0.5 / (1 + std::hypot(h, 4.30))));
  REQUIRE(std::isfinite(p.high_s));
  widen_by_target_spread(p, {1.2, 1.2});  // no spread, but at least the replays' range
  REQUIRE(p.target_rel_sd == 0);
  REQUIRE(p.low_s == Approx(0.5 / (1 + h)));
  REQUIRE(p.high_s == Approx(1.2));
}

TEST_CASE("several traced runs: their classes' median times and counts, each run's time kept", "[predict]") {
  Classes fast = derive_classes(checkpoint(2, 4, 524288, 500000).done());
  Classes mid = derive_classes(checkpoint(2, 4, 524288, 900000).done());
  Classes slow = derive_classes(checkpoint(2, 5, 524288, 2000000).done());  // one more checkpoint
  size_t chosen = 99;
  Classes cs = combine_runs({slow, fast, mid}, &chosen);
  REQUIRE(chosen == 2);  // mid's I/O time is the median
  REQUIRE(cs.io_runs_ns == std::vector<int64_t>{slow.io_ns, fast.io_ns, mid.io_ns});
  REQUIRE(cs.io_ns == mid.io_ns);
  const IoClass& s = find(cs, "fsync 512KiB random shared fsync/1");
  REQUIRE(s.traced_runs_ns == std::vector<int64_t>{10 * 2000000, 8 * 500000, 8 * 900000});
  REQUIRE(s.time_ns == 8 * 900000);
  REQUIRE(s.count == 8);  // the median of 10, 8, 8
  const IoClass& w = find(cs, "write 512KiB random shared fsync/1");
  REQUIRE(w.bytes == 8 * 524288);
  REQUIRE(w.concurrency() == 2);
  REQUIRE(cs.classes[0].key.op == Op::sync);  // still largest first
  SECTION("a class one run did not do counts 0 there") {
    PlanMaker extra = checkpoint(2, 4, 524288, 900000);
    int32_t f = extra.file("/work/extra.dat");
    extra.call(1, Kind::open, {{arg::handle, 7}, {arg::file, f}, {arg::flags, O_WRONLY | O_CREAT}}, 7000, 0, 7);
    Classes two = combine_runs({mid, derive_classes(extra.done())});
    const IoClass& c = find(two, "create per-process");
    REQUIRE(c.traced_runs_ns == std::vector<int64_t>{0, 7000});
    REQUIRE(c.time_ns == 3500);
  }
  SECTION("one run is itself") {
    Classes one = combine_runs({mid}, &chosen);
    REQUIRE(one.io_ns == mid.io_ns);
    REQUIRE(one.classes[0].traced_runs_ns.empty());
  }
}

TEST_CASE("several traced runs: the traced time's uncertainty is their spread over their number", "[predict]") {
  Classes cs = one_class_of_a_second();
  std::vector<std::optional<Runs>> runs(1);
  runs[0] = Runs{{0.9, 1.0, 1.1}, {0.5, 0.5, 0.5}};  // the reference's fio spread: 0.1
  double one = predict_io(cs, runs).classes[0].rel_sd;
  REQUIRE(one == Approx(std::sqrt(0.01 / 3 + 0.01)));  // one traced run: one draw of the reference's spread
  cs.classes[0].traced_runs_ns = {800'000'000, 1'000'000'000, 1'200'000'000, 1'000'000'000};
  double four = predict_io(cs, runs).classes[0].rel_sd;
  double traced_sd = std::sqrt((0.04 + 0 + 0.04 + 0) / 3);  // their sample spread, 0.163
  REQUIRE(four == Approx(std::sqrt(0.01 / 3 + traced_sd * traced_sd / 4)));
  cs.classes[0].traced_runs_ns = {1'000'000'000, 1'000'000'000};  // steady runs: still the fio spread, halved
  REQUIRE(predict_io(cs, runs).classes[0].rel_sd == Approx(std::sqrt(0.01 / 3 + 0.01 / 2)));
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
