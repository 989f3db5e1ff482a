// The prediction's arithmetic: ratios, intervals and spreads (issue 17).
#include "predict/predict.hpp"

#include <fcntl.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "predict/jobs.hpp"
#include "predict/op_classes.hpp"
#include "test/predict/predict_fixture.hpp"

using namespace mpior;
using namespace mpior::predict;
using namespace mpior::predict::testing;

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
  // The repetitions' ratios (0.5 / 0.8 ...) spread a little more than the reference's times: theirs counts.
  double ratio_sd = rel_sd({0.5 / 0.8, 0.5 / 1.0, 0.5 / 1.2});
  REQUIRE(ref.classes[0].ratio_rel_sd == Approx(ratio_sd));
  REQUIRE(ref.classes[0].rel_sd == Approx(std::sqrt(ratio_sd * ratio_sd / 3 + 0.04)));
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
  SECTION("the ranks at once: the most any run had; MPI-IO's own time by its calls' classes, summed") {
    Classes apart = fast, waits = fast;
    for (IoClass& c : apart.classes) c.at_once = 1, c.peak = 1;
    ClassKey own{Op::mpiio_own, 0, false, true, 0, false}, wk = w.key;
    waits.classes.push_back({own, 1, 100, 0, 0, {0}, {}, {}, {{wk, 100}}, {{wk, 40}}});
    Classes both = combine_runs({apart, waits, waits});
    REQUIRE(find(both, "write 512KiB random shared fsync/1").at_once ==
            find(fast, "write 512KiB random shared fsync/1").at_once);
    REQUIRE(find(both, "write 512KiB random shared fsync/1").peak == 2);
    REQUIRE(find(both, "MPI-IO's own shared").within == std::map<ClassKey, int64_t>{{wk, 200}});
    REQUIRE(find(both, "MPI-IO's own shared").waiting == std::map<ClassKey, int64_t>{{wk, 80}});
  }
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
  double ratios = std::pow(rel_sd({0.5 / 0.9, 0.5 / 1.0, 0.5 / 1.1}), 2);  // the repetitions' ratios' spread
  REQUIRE(one == Approx(std::sqrt(ratios / 3 + 0.01)));  // one traced run: one draw of the reference's spread
  cs.classes[0].traced_runs_ns = {800'000'000, 1'000'000'000, 1'200'000'000, 1'000'000'000};
  double four = predict_io(cs, runs).classes[0].rel_sd;
  double traced_sd = std::sqrt((0.04 + 0 + 0.04 + 0) / 3);  // their sample spread, 0.163
  // The median's uncertainty, and one run on the target varying as the application's runs did (fio's target
  // runs were steady).
  REQUIRE(four == Approx(std::sqrt(ratios / 3 + traced_sd * traced_sd + traced_sd * traced_sd / 4)));
  cs.classes[0].traced_runs_ns = {1'000'000'000, 1'000'000'000};  // steady runs: still the fio spread, halved
  REQUIRE(predict_io(cs, runs).classes[0].rel_sd == Approx(std::sqrt(ratios / 3 + 0.01 / 2)));
}

TEST_CASE("an extrapolated plan: the target's time per op at its concurrency, not a ratio", "[predict]") {
  const ClassKey w{Op::write, 65536, true, true, 64, false}, f{Op::sync, 65536, true, true, 64, false};
  Classes cs{std::vector<IoClass>(3), 0, {}, false, {}};
  auto put = [&](size_t i, ClassKey k, int64_t ns, uint64_t count) {
    cs.classes[i].key = k, cs.classes[i].time_ns = ns, cs.classes[i].count = count;
  };
  put(0, w, 640'000'000, 6400);                                     // writes at the small counts' 0.1 ms
  put(1, f, 160'000'000, 100);                                      // fsyncs at 1.6 ms
  put(2, {Op::stat, 0, false, false, 0, false}, 10'000'000, 1000);  // not measured
  cs.io_ns = 810'000'000;
  std::vector<std::optional<Runs>> runs(3);
  // fio at this count's concurrency: writes 0.2 ms on both sides, fsyncs 64 ms on the reference, 6.4 on the target
  runs[0] = Runs{{2e-4, 2e-4, 2e-4}, {2e-4, 2e-4, 2e-4}};
  runs[1] = Runs{{64e-3, 64e-3, 64e-3}, {6.4e-3, 6.4e-3, 6.4e-3}};
  Prediction ratio = predict_io(cs, runs);
  cs.extrapolated = true;
  Prediction p = predict_io(cs, runs);
  // A ratio scales the fitted times (as if the journal were no busier at this count); the pair's time is
  // the writes' count x the target's cycle, shared between the two as the plan has it.
  double pair = 6400 * (2e-4 + 6.4e-3 / 64);
  CHECK(ratio.classes[0].predicted_s + ratio.classes[1].predicted_s == Approx(0.8 * 0.3e-3 / 1.2e-3));
  for (size_t i : {0, 1}) {
    CHECK(p.classes[i].per_op_basis);
    CHECK(p.classes[i].extrapolated);
    CHECK(p.classes[i].ratio == Approx(pair / 0.8));
    CHECK(p.classes[i].low_s <= p.classes[i].predicted_s);
    CHECK(p.classes[i].high_s >= p.classes[i].predicted_s);
  }
  CHECK(p.classes[0].predicted_s == Approx(pair * 0.64 / 0.8));
  CHECK(p.classes[1].predicted_s == Approx(pair * 0.16 / 0.8));
  // An unmeasured class takes the measured classes' ratio, as for a traced plan.
  CHECK(p.classes[2].ratio == Approx(pair / 0.8));
  JobPlan jp{
      {Job{"job-1", "", {0, 1}, 0, 0, 0, 0, 0, 1, {}}}, {0, 0, -1}, {"write", "sync", ""}, {"", "", "no benchmark"}, 0};
  CHECK(report_json({}, cs, jp, p)["classes"][0]["basis"] == "target time per op (extrapolated plan)");
}

namespace {
// One fio job's JSON: `writes` at `write_ns` each and `syncs` at `sync_ns`.
nlohmann::json fio_run(double writes, double write_ns, double syncs = 0, double sync_ns = 0) {
  nlohmann::json job = {{"write", {{"total_ios", writes}, {"lat_ns", {{"mean", write_ns}}}}}};
  if (syncs > 0) job["sync"] = {{"total_ios", syncs}, {"lat_ns", {{"mean", sync_ns}}}};
  return {{"jobs", {job}}};
}
// One class of `count` calls by 16 ranks, all at once (an extrapolated plan's).
Classes sixteen_at_once(ClassKey key, uint64_t count) {
  Classes cs = one_class_of_a_second();
  IoClass& c = cs.classes[0];
  c.key = key;
  c.count = count;
  for (int32_t r = 0; r < 16; ++r) c.ranks.insert(r);
  c.at_once = 16;
  return cs;
}
}  // namespace

TEST_CASE("fio jobs past the cores: bounded where one job's calls do not sleep, as they are where they do",
          "[predict]") {
  Classes cs = sixteen_at_once({Op::write, 65536, false, false, 0, false}, 1600);
  IoClass& c = cs.classes[0];
  JobPlan jp = plan_jobs(cs, {});
  REQUIRE(jp.jobs.size() == 1);
  Job& job = jp.jobs[0];
  REQUIRE(fio_jobs(job) == 16);
  // The target (tmpfs): 26 sleeps in 1,600 writes and 25 fsyncs of 3 us, CPU-bound: two jobs on two cores.
  std::string t = bounded_text(job, 1, 26, fio_run(1575, 80e3, 25, 3e3), 2);
  CHECK(job.bounded[1] == 2);
  CHECK(job.sleeps_per_call[1] == Approx(26.0 / 1600));
  CHECK(t.find("numjobs=2\n") != std::string::npos);
  CHECK(t.find("numjobs=16") == std::string::npos);
  // The reference (a disk, fsyncs): a sleep every other call: all 16 at once, as the ranks were.
  CHECK(bounded_text(job, 0, 1000, fio_run(1800, 20e3), 2).empty());
  CHECK(job.bounded[0] == 0);
  CHECK(job.sleeps_per_call[0] == Approx(1000.0 / 1800));
  // Rare sleeps, but the time in fsyncs waiting for the disk (0.08 a call, 93% of the time in syncs).
  Job disk = jp.jobs[0];
  disk.bounded[1] = 0;
  CHECK(bounded_text(disk, 1, 130, fio_run(1600, 20e3, 25, 18e6), 2).empty());
  CHECK(disk.bounded[1] == 0);
  // As many cores as ranks: nothing to bound.
  Job again = jp.jobs[0];
  again.bounded[1] = 0;
  CHECK(bounded_text(again, 1, 26, fio_run(1600, 80e3), 16).empty());
  CHECK(again.bounded[1] == 0);
  // Metadata jobs keep their workers.
  c.key = {Op::create, 0, false, false, 0, false};
  JobPlan meta = plan_jobs(cs, {});
  CHECK(fio_jobs(meta.jobs[0]) == 0);
  CHECK(bounded_text(meta.jobs[0], 1, 0, fio_run(1600, 80e3), 2).empty());
}

TEST_CASE("fio's JSON: the calls of all its jobs and the share of their time in syncs", "[predict]") {
  nlohmann::json out = nlohmann::json::parse(
      R"({"jobs": [{"write": {"total_ios": 100, "lat_ns": {"mean": 1000}}, "sync": {"total_ios": 12, "lat_ns": {"mean": 25000}}},
                   {"read": {"total_ios": 5, "lat_ns": {"mean": 0}}}]})");
  CHECK(calls_of(out) == 117);
  CHECK(sync_share(out) == Approx(0.75));
  CHECK(calls_of(nlohmann::json::object()) == 0);
  CHECK(sync_share(nlohmann::json::object()) == 0);
}

TEST_CASE("metadata jobs past the cores: bounded where one worker's calls do not sleep", "[predict]") {
  Classes cs = sixteen_at_once({Op::create, 0, false, false, 0, false}, 48000);
  JobPlan jp = plan_jobs(cs, {});
  REQUIRE(jp.jobs.size() == 1);
  Job& job = jp.jobs[0];
  REQUIRE(meta_workers(job) == 16);
  // The target (tmpfs): 40 sleeps in 3,000 creates of one worker alone: two workers on two cores.
  CHECK(bounded_workers(job, 1, 40, 3000, 2) == 2);
  CHECK(job.bounded[1] == 2);
  CHECK(job.sleeps_per_call[1] == Approx(40.0 / 3000));
  CHECK(meta_args_on(job, 1)[1] == "2");
  CHECK(meta_args_on(job, 1)[2] == job.meta_args[2]);  // each worker makes what one did
  // The reference: a sleep every other call (a journal, a lock): all 16, as the ranks were.
  CHECK(bounded_workers(job, 0, 1500, 3000, 2) == 0);
  CHECK(job.bounded[0] == 0);
  CHECK(meta_args_on(job, 0) == job.meta_args);
  // As many cores as workers: nothing to bound.
  Job again = jp.jobs[0];
  again.bounded[1] = 0;
  CHECK(bounded_workers(again, 1, 40, 3000, 16) == 0);
  CHECK(meta_args_on(again, 1) == again.meta_args);
  // Data jobs have no workers.
  CHECK(meta_workers(plan_jobs(sixteen_at_once({Op::write, 65536, false, false, 0, false}, 1600), {}).jobs[0]) == 0);
}

TEST_CASE("an extrapolated plan's ranks at once: fitted to the traced runs' against their rank counts", "[predict]") {
  auto with = [](double at_once, int32_t ranks, ClassKey key) {
    Classes cs = one_class_of_a_second();
    cs.classes[0].key = key;
    cs.classes[0].at_once = at_once;
    for (int32_t r = 0; r < ranks; ++r) cs.classes[0].ranks.insert(r);
    return cs;
  };
  ClassKey synced{Op::write, 65536, false, false, 64, false}, other{Op::read, 65536, false, false, 0, false};
  Classes plan = with(14.7, 16, synced);  // fitted clocks: every rank at once
  plan.classes.push_back(with(16, 16, other).classes[0]);
  fit_at_once(plan, 16, {{2, with(1.13, 2, synced)}, {3, with(1.0, 3, synced)}, {4, with(1.45, 4, synced)}});
  // The least-squares line through (2, 1.13), (3, 1.0), (4, 1.45) at 16: 1.193 + 0.16 x 13.
  CHECK(plan.classes[0].fitted_at_once == Approx(1.1933 + 0.16 * 13).epsilon(1e-3));
  CHECK(plan.classes[0].concurrency() == 3);
  CHECK(plan.classes[1].fitted_at_once == 0);  // in no traced run: the plan's
  CHECK(plan.classes[1].concurrency() == 16);
  // Between 1 and the ranks that did it.
  Classes steep = with(8, 8, synced);
  fit_at_once(steep, 8, {{2, with(2, 2, synced)}, {4, with(4, 4, synced)}});
  CHECK(steep.classes[0].fitted_at_once == 8);
  Classes falling = with(8, 8, synced);
  fit_at_once(falling, 8, {{2, with(2, 2, synced)}, {4, with(1, 4, synced)}});
  CHECK(falling.classes[0].fitted_at_once == 1);
  Classes one_run = with(8, 8, synced);  // one traced count fits no line
  fit_at_once(one_run, 8, {{2, with(2, 2, synced)}});
  CHECK(one_run.classes[0].fitted_at_once == 0);
}

TEST_CASE("the interval carries the application's run-to-run spread and the repetitions' ratios'", "[predict]") {
  Classes cs = one_class_of_a_second();
  std::vector<std::optional<Runs>> runs(1);
  // Steady fio runs (1%) of an application whose traced runs varied 20%: one run on the target varies as much.
  runs[0] = Runs{{1.0, 1.01, 0.99}, {0.5, 0.505, 0.495}};
  cs.classes[0].traced_runs_ns = {800'000'000, 1'000'000'000, 1'200'000'000};
  Prediction p = predict_io(cs, runs);
  REQUIRE(p.classes[0].application_rel_sd == Approx(0.2));
  REQUIRE(p.classes[0].rel_sd > 0.2);
  // 4.30 x 0.2 either side at least: the runs' 0.4-0.6 s on the target are inside.
  REQUIRE(p.low_s < 0.5 / 1.86);
  REQUIRE(p.high_s > 0.5 * 1.86);
  REQUIRE(p.spread == std::vector<size_t>{0});  // flagged: over 20%
  // Each side's runs spread 9%, but a slow reference run met a fast target run: the ratios spread 18%.
  cs.classes[0].traced_runs_ns.clear();
  runs[0] = Runs{{1.0, 1.2, 1.0, 1.2}, {0.6, 0.5, 0.6, 0.5}};
  Prediction paired = predict_io(cs, runs);
  double ratio_sd = rel_sd({0.6, 0.5 / 1.2, 0.6, 0.5 / 1.2});
  REQUIRE(paired.classes[0].ratio_rel_sd == Approx(ratio_sd));
  double side = rel_sd({1.0, 1.2, 1.0, 1.2});
  REQUIRE(paired.classes[0].rel_sd ==
          Approx(std::sqrt(ratio_sd * ratio_sd / 4 + side * side + side * side)));  // theirs, not the sides'
}

TEST_CASE("a close that flushes on the target only: count x the target's time per op, however slow the reference's",
          "[predict]") {
  // IOR's shared file traced on tmpfs: its closes took 6 us, their job's 12 us under load (over the 10 us
  // floor), ext4's 90 ms: a ratio of 7,500 was no bound for the classes not measured.
  Classes cs;
  cs.classes.resize(3);
  cs.classes[0].key = {Op::close, 256 << 20, false, true, 0, false, true};
  cs.classes[0].count = 2;
  cs.classes[0].time_ns = 12'000;
  cs.classes[1].key.op = Op::write;
  cs.classes[1].count = 512;
  cs.classes[1].time_ns = 200'000'000;
  cs.classes[2].count = 10;  // not measured
  cs.classes[2].time_ns = 1'000'000;
  cs.io_ns = 201'012'000;
  std::vector<std::optional<Runs>> runs(3);
  runs[0] = Runs{{11e-6, 12e-6, 13e-6}, {0.08, 0.09, 0.10}};
  runs[1] = Runs{{1e-3, 1e-3, 1e-3}, {0.5e-3, 0.5e-3, 0.5e-3}};
  Prediction p = predict_io(cs, runs);
  REQUIRE(p.classes[0].per_op_basis);
  REQUIRE(p.classes[0].predicted_s == Approx(2 * 0.09));
  REQUIRE(p.high_ratio == Approx(0.5));     // the writes', not the close's 7,500
  REQUIRE(p.classes[2].high_s < 2 * 1e-3);  // its traced time, widened by the spread: not x 7,500
  cs.classes[0].key = {Op::close, 0, false, true, 0, false, false};  // a close of nothing written: a ratio
  REQUIRE(!predict_io(cs, runs).classes[0].per_op_basis);
}
