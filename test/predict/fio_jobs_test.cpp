// mpior-predict's fio jobs: what one pass of a class's job moves, and how passes repeat it.
#include <fcntl.h>
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <string>

#include "predict/jobs.hpp"
#include "test/predict/predict_fixture.hpp"

using namespace mpior;
using namespace mpior::predict;
using namespace mpior::predict::testing;

namespace {
bool has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}
}  // namespace

TEST_CASE("fio jobs: each pass of writes on a new file, shared or not, the program's volume each", "[predict]") {
  // IOR's collective writes: 2 ranks extending one shared file, 64 MiB a rank in 1 MiB writes, 0.5 ms each.
  PlanMaker pm(2);
  int32_t f = pm.file("/work/ior.dat");
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 64; ++i)
      pm.call(r, Kind::pwrite64,
              {{arg::handle, 5}, {arg::file, f}, {arg::offset, (r * 64 + i) << 20}, {arg::count, 1 << 20}}, 500000, 0,
              1 << 20);
  Classes cs = derive_classes(pm.done());
  const Job j = plan_jobs(cs, {0.1, 0.01, 12}).jobs[0];
  // 32 ms a pass: once, the 64 MiB a rank wrote (two jobs cannot each unlink shared.dat after a pass, and a
  // pass over the last one's would rewrite its cached pages: on ext4 about tmpfs's cost).
  for (const char* line : {"rw=write", "size=67108864", "numjobs=2", "filename=shared.dat", "loops=1"})
    CHECK(has(j.text, line));
  CHECK(j.passes == 1);
  CHECK(j.text.find("io_size") == std::string::npos);
  CHECK(j.text.find("unlink_each_loop") == std::string::npos);
  // The ranks one after the other (one job of both ranks' writes): 2 passes to 0.1 s, each on a new file.
  for (IoClass& c : cs.classes) c.at_once = 1;
  const Job turns = plan_jobs(cs, {0.1, 0.01, 12}).jobs[0];
  for (const char* line : {"numjobs=1", "size=134217728", "loops=2", "unlink_each_loop=1"})
    CHECK(has(turns.text, line));
  // A checkpoint of 4 ranks that took turns (one job of their 16 writes): it rewrites the 4 ranks' blocks,
  // each of which the program allocated once, and a new file each pass.
  Classes ckpt = derive_classes(checkpoint(4, 4, 524288).done());
  for (IoClass& c : ckpt.classes) c.at_once = 1;
  const Job one = plan_jobs(ckpt, {0.5, 0.01, 12}).jobs[0];
  for (const char* line : {"numjobs=1", "size=2097152", "io_size=8388608", "unlink_each_loop=1"})
    CHECK(has(one.text, line));
  // Reads cover the region for the traced volume in one go, as before.
  PlanMaker rd(1);
  int32_t g = rd.file("/work/in.dat");
  for (int i = 0; i < 8; ++i)
    rd.call(0, Kind::pread64, {{arg::handle, 5}, {arg::file, g}, {arg::offset, i << 20}, {arg::count, 1 << 20}}, 100000,
            0, 1 << 20);
  Classes reads = derive_classes(rd.done());
  const Job r = plan_jobs(reads, {0.1, 0.01, 12}).jobs[0];
  CHECK(r.text.find("loops") == std::string::npos);
  CHECK(has(r.text, "io_size=" + std::to_string(8 * (1 << 20) * r.passes)));
}

TEST_CASE("fio jobs: an unlink removes files of the traced size, synced where the program's were", "[predict]") {
  // Each of 2 ranks writes its own file (8 MiB, fsynced or not) and removes it.
  auto written_then_removed = [](bool sync) {
    PlanMaker pm(2);
    for (int r = 0; r < 2; ++r) {
      int32_t f = pm.file("/work/ior.dat." + std::to_string(r));
      pm.call(r, Kind::open, {{arg::handle, 5}, {arg::file, f}, {arg::flags, O_WRONLY | O_CREAT}}, 20000, 0, 5);
      for (int i = 0; i < 8; ++i)
        pm.call(r, Kind::pwrite64, {{arg::handle, 5}, {arg::file, f}, {arg::offset, i << 20}, {arg::count, 1 << 20}},
                500000, 0, 1 << 20);
      if (sync) pm.call(r, Kind::fsync, {{arg::handle, 5}, {arg::file, f}}, 9000000);
      pm.call(r, Kind::close, {{arg::handle, 5}, {arg::file, f}}, 10000);
      pm.call(r, Kind::unlink, {{arg::file, f}}, 30000000);
    }
    return derive_classes(pm.done());
  };
  Classes synced = written_then_removed(true);
  const IoClass& unlink = find(synced, "unlink per-process");
  CHECK(unlink.removed_bytes == 2 * (8 << 20));
  CHECK(unlink.removed_synced);
  JobPlan jp = plan_jobs(synced, {0.1, 0.01, 12});
  const Job* meta = nullptr;
  for (const Job& j : jp.jobs)
    if (!j.meta_args.empty() && j.meta_args[0] == "unlink") meta = &j;
  REQUIRE(meta);
  REQUIRE(meta->meta_args.size() == 7);
  CHECK(meta->meta_args[5] == std::to_string(8 << 20));
  CHECK(meta->meta_args[6] == "1");
  CHECK(jp.space >= 2 * (8 << 20));
  // Not synced: the files hold their pages only.
  Classes buffered = written_then_removed(false);
  for (const Job& j : plan_jobs(buffered, {0.1, 0.01, 12}).jobs)
    if (!j.meta_args.empty() && j.meta_args[0] == "unlink") CHECK(j.meta_args[6] == "0");
}

TEST_CASE("fio jobs: writes synced to a shared file are at once when the ranks share an epoch", "[predict]") {
  // checkpoint_sim traced on tmpfs: each rank writes its 512 KiB block of one file and fsyncs it, a barrier
  // between checkpoints. Rank 1's clock puts its writes 250 ms after rank 0's: no two calls overlap.
  auto checkpoints = [](int64_t offset, bool barrier_between) {
    PlanMaker pm(2);
    int32_t f = pm.file("/dev/shm/checkpoint.dat");
    pm.now[1] += offset;
    for (int r = 0; r < 2; ++r)
      pm.call(r, Kind::open, {{arg::handle, 6}, {arg::file, f}, {arg::flags, O_WRONLY | O_CREAT}}, 2000, 0, 6);
    for (int s = 0; s < 4; ++s)
      for (int r = 0; r < 2; ++r) {
        pm.call(r, Kind::MPI_Barrier, {{arg::comm, 0}, {arg::coll_seq, 2 * s}}, 1000);
        if (barrier_between && r == 1)
          pm.call(0, Kind::MPI_Barrier, {{arg::comm, 0}, {arg::coll_seq, 2 * s + 1}}, 1000);
        if (barrier_between && r == 1)
          pm.call(1, Kind::MPI_Barrier, {{arg::comm, 0}, {arg::coll_seq, 2 * s + 1}}, 1000);
        pm.call(r, Kind::pwrite64, {{arg::handle, 6}, {arg::file, f}, {arg::offset, r * 524288}, {arg::count, 524288}},
                200000, 0, 524288);
        pm.call(r, Kind::fsync, {{arg::handle, 6}, {arg::file, f}}, 10000);
      }
    return derive_classes(pm.done());
  };
  Classes together = checkpoints(250'000'000, false);
  for (const char* label : {"write 512KiB random shared fsync/1", "fsync 512KiB random shared fsync/1"}) {
    INFO(label);
    CHECK(find(together, label).at_once == Approx(2));
    CHECK(find(together, label).concurrency() == 2);
  }
  // A barrier between the ranks' checkpoints: one at a time, whatever the clocks.
  Classes turns = checkpoints(0, true);
  CHECK(find(turns, "write 512KiB random shared fsync/1").concurrency() == 1);
  // Unsynced writes keep their spans: 250 ms apart, one at a time.
  PlanMaker pm(2);
  int32_t g = pm.file("/dev/shm/out.dat");
  pm.now[1] += 250'000'000;
  for (int r = 0; r < 2; ++r)
    pm.call(r, Kind::pwrite64, {{arg::handle, 6}, {arg::file, g}, {arg::offset, r * 524288}, {arg::count, 524288}},
            200000, 0, 524288);
  CHECK(find(derive_classes(pm.done()), "write 512KiB sequential shared").concurrency() == 1);
}

TEST_CASE("fio jobs: reads of files the rank wrote keep the pages fio's layout left", "[predict]") {
  // mdtest's 4 KiB files: each rank writes its file, then reads it back (from the page cache); another
  // rank reads an input it never wrote.
  PlanMaker pm(2);
  int32_t mine = pm.file("/work/md/file.0"), input = pm.file("/work/input.dat");
  for (int i = 0; i < 8; ++i)
    pm.call(0, Kind::pwrite64, {{arg::handle, 5}, {arg::file, mine}, {arg::offset, i << 12}, {arg::count, 4096}}, 20000,
            0, 4096);
  for (int i = 0; i < 8; ++i)
    pm.call(0, Kind::pread64, {{arg::handle, 5}, {arg::file, mine}, {arg::offset, i << 12}, {arg::count, 4096}}, 7000,
            0, 4096);
  for (int i = 0; i < 8; ++i)
    pm.call(1, Kind::pread64, {{arg::handle, 6}, {arg::file, input}, {arg::offset, i << 22}, {arg::count, 1 << 22}},
            9000000, 0, 1 << 22);
  Classes cs = derive_classes(pm.done());
  JobPlan jp = plan_jobs(cs, {0.1, 0.0, 12});
  auto job_of = [&](const char* label) -> const std::string& {
    const IoClass& c = find(cs, label);
    size_t i = size_t(&c - cs.classes.data());
    REQUIRE(jp.job_of[i] >= 0);
    return jp.jobs[size_t(jp.job_of[i])].text;
  };
  CHECK(find(cs, "read 4KiB sequential per-process").reads_written);
  CHECK(has(job_of("read 4KiB sequential per-process"), "invalidate=0"));
  CHECK(!find(cs, "read 4MiB sequential per-process").reads_written);
  CHECK(job_of("read 4MiB sequential per-process").find("invalidate") == std::string::npos);
}

TEST_CASE("fio jobs: a class small on the reference that may matter in the prediction is measured after", "[predict]") {
  // mdtest on ext4 (mounted with discard): rmdirs of 5 ms are 96% of the traced time; the mkdirs and stats
  // beside them, under 1%, are most of the time on tmpfs, where the rmdirs cost 3% of theirs.
  PlanMaker pm(2);
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 100; ++i) {
      int32_t d = pm.file(fmt::format("/work/md/dir.{}.{}", r, i));
      pm.call(r, Kind::mkdir, {{arg::file, d}}, 40000);
      pm.call(r, Kind::stat, {{arg::file, d}}, 8000);
      pm.call(r, Kind::rmdir, {{arg::file, d}}, 5000000);
    }
  Classes cs = derive_classes(pm.done());
  JobOptions opt{0.5, 0.01, 12};
  JobPlan first = plan_jobs(cs, opt);
  REQUIRE(first.jobs.size() == 1);
  CHECK(first.jobs[0].meta_args[0] == "rmdir");
  // Predicted 0.03 s (the rmdirs at ratio 0.03): the mkdirs (8 ms traced) and stats (1.6 ms) may be 1% of it.
  opt.force = may_matter(cs, first, opt, 0.03, 0.03);
  REQUIRE(opt.force.size() == cs.classes.size());
  JobPlan wider = plan_jobs(cs, opt);
  REQUIRE(wider.jobs.size() == 3);
  CHECK(wider.jobs[0].text == first.jobs[0].text);  // the jobs already run keep their names and texts
  CHECK(wider.jobs[1].meta_args[0] == "mkdir");
  CHECK(wider.jobs[2].meta_args[0] == "stat");
  for (const std::string& why : wider.unmeasured) CHECK(why.empty());
  // Predicted at the traced time (every ratio 1): both stay under 1% of it, no second round.
  CHECK(may_matter(cs, first, opt, double(cs.io_ns) / 1e9, 1.0).empty());
  // Predicted 5 s with a ratio of 10 measured: the mkdirs at that ratio may be 1% of it, the stats not.
  std::vector<bool> slower = may_matter(cs, first, opt, 5.0, 10.0);
  REQUIRE(slower.size() == cs.classes.size());
  CHECK(slower[size_t(&find(cs, "mkdir per-process") - cs.classes.data())]);
  CHECK(!slower[size_t(&find(cs, "stat per-process") - cs.classes.data())]);
}

TEST_CASE("a close of writes made since a truncation to zero: a class of its own, measured with those writes",
          "[predict]") {
  // IOR's shared file through MPI-IO: set_size(0), then the writes, then the close (ext4 flushes such a file
  // at its close). Rank 1 syncs before its close: its close flushes nothing.
  PlanMaker pm(2);
  int32_t f = pm.file("/work/ior.dat");
  for (int r = 0; r < 2; ++r) {
    pm.call(r, Kind::open, {{arg::handle, 6}, {arg::file, f}, {arg::flags, O_WRONLY | O_CREAT}}, 2000, 0, 6);
    if (r == 0) pm.call(r, Kind::ftruncate, {{arg::handle, 6}, {arg::file, f}, {arg::offset, 0}}, 2000);
    for (int i = 0; i < 4; ++i)
      pm.call(r, Kind::pwrite64,
              {{arg::handle, 6}, {arg::file, f}, {arg::offset, (r * 4 + i) << 20}, {arg::count, 1 << 20}}, 400000, 0,
              1 << 20);
    if (r == 1) pm.call(r, Kind::fsync, {{arg::handle, 6}, {arg::file, f}}, 900000);
    pm.call(r, Kind::close, {{arg::handle, 6}, {arg::file, f}}, 1000);
  }
  Classes cs = derive_classes(pm.done());
  const IoClass& flushing = find(cs, "close of 4MiB written truncated shared");
  REQUIRE(flushing.count == 1);
  REQUIRE(flushing.bytes == 4 << 20);
  REQUIRE(find(cs, "close shared").count == 1);  // rank 1's, after its fsync
  JobPlan jp = plan_jobs(cs, {0.5, 0.01, 12});
  for (size_t i = 0; i < cs.classes.size(); ++i) {
    if (cs.classes[i].key.op != Op::close) continue;
    bool flushes = cs.classes[i].key.size > 0;
    // 1 us of 4.5 ms traced: below 1%, measured all the same where the close may flush the writes.
    REQUIRE((jp.job_of[i] >= 0) == flushes);
    if (!flushes) continue;
    const Job& job = jp.jobs[size_t(jp.job_of[i])];
    REQUIRE(job.meta_args.size() == 8);
    CHECK(job.meta_args[0] == "close");
    CHECK(job.meta_args[5] == "4194304");  // the bytes its descriptor writes before the timed close
    CHECK(job.meta_args[7] == "1");        // after truncating its file to zero
  }
}

TEST_CASE("closes of one truncated shared file: its workers share a file; its unlink waits for their flush",
          "[predict]") {
  // As IOR -a MPIIO -c: the file truncated to zero (each rank's open, O_TRUNC), each rank's writes, the
  // ranks' closes together (one epoch), then rank 0 deletes the file. ext4 flushes the file at each close
  // and the unlink waits for that write-back.
  PlanMaker pm(2);
  int32_t f = pm.file("/work/ior.dat");
  for (int r = 0; r < 2; ++r) {
    pm.call(r, Kind::open, {{arg::handle, 6}, {arg::file, f}, {arg::flags, O_WRONLY | O_CREAT | O_TRUNC}}, 2000, 0, 6);
    pm.call(r, Kind::MPI_Barrier, {{arg::comm, 0}}, 5000);
    for (int i = 0; i < 4; ++i)
      pm.call(r, Kind::pwrite64,
              {{arg::handle, 6}, {arg::file, f}, {arg::offset, (r * 4 + i) << 20}, {arg::count, 1 << 20}}, 400000, 0,
              1 << 20);
    pm.call(r, Kind::close, {{arg::handle, 6}, {arg::file, f}}, 80'000'000);
  }
  pm.call(0, Kind::unlink, {{arg::file, f}}, 90'000'000);
  Classes cs = derive_classes(pm.done());
  const IoClass& closes = find(cs, "close of 4MiB written truncated shared");
  REQUIRE(closes.count == 2);
  REQUIRE(closes.concurrency() == 2);
  const IoClass& unlink = find(cs, "unlink shared");
  CHECK(unlink.removed_bytes == 8 << 20);
  CHECK(unlink.removed_flushed);
  JobPlan jp = plan_jobs(cs, {0.5, 0.01, 12});
  const Job& close_job = jp.jobs[size_t(jp.job_of[size_t(&closes - cs.classes.data())])];
  REQUIRE(close_job.meta_args.size() == 9);
  CHECK(close_job.meta_args[1] == "2");  // two workers
  CHECK(close_job.meta_args[5] == "4194304");
  CHECK(close_job.meta_args[7] == "1");  // truncated
  CHECK(close_job.meta_args[8] == "1");  // one file for both
  const Job& unlink_job = jp.jobs[size_t(jp.job_of[size_t(&unlink - cs.classes.data())])];
  REQUIRE(unlink_job.meta_args.size() == 8);
  CHECK(unlink_job.meta_args[5] == "8388608");
  CHECK(unlink_job.meta_args[7] == "1");  // closed after a truncation: a flush started before the unlink
}
