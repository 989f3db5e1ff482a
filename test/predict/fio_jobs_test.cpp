// mpior-predict's fio jobs: what one pass of a class's job moves, and how passes repeat it.
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
