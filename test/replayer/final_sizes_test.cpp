#include "replayer/final_sizes.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "replayer/setup.hpp"
#include "test/replayer/plan_maker.hpp"

using namespace mpior::replay;
using namespace mpior::replay::testing;
using mpior::trace::Event;
using mpior::trace::Kind;

namespace {

constexpr int32_t kFile = 3;  // the first plan file after the standard streams

Event call(Kind k, int64_t start, int64_t end, std::array<int64_t, mpior::trace::kNumArgs> args, int64_t ret = 0) {
  Event ev;
  ev.kind = k;
  ev.start_ns = start, ev.end_ns = end;
  ev.args = args;
  ev.ret = ret;
  return ev;
}
Event truncation(int64_t at, int64_t size) { return call(Kind::ftruncate, at, at + 10, io_args(5, 0, size)); }
Event write_at(int64_t at, int64_t offset, int64_t n) {
  return call(Kind::pwrite, at, at + 10, io_args(5, 0, offset, n), n);
}

mpior::trace::Plan one_file_plan(bool created = true) {
  PlanMaker pm(2);
  pm.file("/out/data", created);
  return pm.plan;
}

SizeBounds bounds(const std::vector<const SizeLog*>& logs, bool created = true) {
  auto all = expected_sizes(one_file_plan(created), logs);
  REQUIRE(all.count(kFile) == 1);
  return all.at(kFile);
}

}  // namespace

TEST_CASE("a truncation inside a synchronising collective comes before the writes after it") {
  // IOR: rank 0 truncates in MPI_File_set_size, rank 1 writes after it; the
  // traced times (statistical) do not tell the order, the synchronisation does.
  SizeLog r0, r1;
  r0.grow(kFile, write_at(0, 0, 100), 100);  // the first round's data
  r0.synced(kFile);
  r0.set(kFile, truncation(500, 0), 0);
  r0.synced(kFile);
  r0.grow(kFile, write_at(520, 0, 100), 100);
  r1.synced(kFile);
  r1.synced(kFile);
  r1.grow(kFile, write_at(400, 100, 100), 200);  // earlier by its own clock
  SizeBounds b = bounds({&r0, &r1});
  CHECK(b.lower == 200);
  CHECK(b.upper == 200);
  // The same calls with no synchronisation between them: only bounded.
  SizeLog a, c;
  a.set(kFile, truncation(500, 0), 0);
  c.grow(kFile, write_at(400, 100, 100), 200);
  b = bounds({&a, &c});
  CHECK(b.lower == 0);
  CHECK(b.upper == 200);
}

TEST_CASE("exact traced times order two ranks' calls, within a thread its order does") {
  SizeLog a(0, true), c(1'000'000, true);
  a.set(kFile, truncation(0, 0), 0);
  c.grow(kFile, write_at(0, 4096, 4096), 8192);  // a millisecond later on the aligned clock
  SizeBounds b = bounds({&a, &c});
  CHECK(b.lower == 8192);
  CHECK(b.upper == 8192);
  // One thread: a write, then a truncation below it, whatever the times say.
  SizeLog one;
  one.grow(kFile, write_at(100, 0, 8192), 8192);
  one.set(kFile, truncation(0, 10), 10);
  b = bounds({&one});
  CHECK(b.lower == 10);
  CHECK(b.upper == 10);
}

TEST_CASE("the replayed calls of one thread set and grow files as the plan says") {
  SizeLog log;
  log.posix(call(Kind::open, 0, 1, io_args(5, 0, -1, -1, O_WRONLY | O_CREAT | O_TRUNC)), true, kFile, -1);
  log.posix(write_at(2, 0, 300), true, kFile, -1);
  log.posix(call(Kind::write, 3, 4, io_args(5, 0, 300, 50)), true, kFile, -1);  // failed when traced: ret 0
  SizeBounds b = bounds({&log});
  CHECK(b.lower == 300);
  CHECK(b.upper == 300);
  log.posix(call(Kind::unlink, 5, 6, io_args(-1, 0)), true, kFile, -1);
  b = bounds({&log});
  CHECK(b.lower == -1);
  CHECK(b.upper == -1);
  // A rename moves sizes the log does not follow: the file is not checked.
  log.posix(call(Kind::rename, 7, 8, io_args(-1, 0, 0, 0, 0, 0, 1)), true, kFile, 4);
  CHECK(expected_sizes(one_file_plan(), {&log}).count(kFile) == 0);
  // Spliced in from a pipe (no file on the reading side): not checked either.
  SizeLog spliced;
  spliced.posix(write_at(0, 0, 10), true, kFile, -1);
  spliced.posix(call(Kind::splice, 1, 2, io_args(3, -1, -1, 1024, 0, 0, 0, 5), 1024), true, -1, kFile);
  CHECK(expected_sizes(one_file_plan(), {&spliced}).count(kFile) == 0);
}

TEST_CASE("a file the application found there is at least its traced size, with no upper bound") {
  SizeLog log;
  log.grow(kFile, write_at(0, 0, 10), 10);
  SizeBounds b = bounds({&log}, false);
  CHECK(b.lower == 10);
  CHECK(b.upper == kAnySize);
}

TEST_CASE("size logs pass through MPI mode's integers unchanged") {
  SizeLog a(0, true);
  a.set(kFile, truncation(1, 7), 7);
  a.synced(kFile);
  a.grow(kFile, write_at(30, 0, 100), 100);
  std::vector<int64_t> flat;
  a.append_to(flat);
  const int64_t* p = flat.data();
  SizeLog back = SizeLog::read_from(p, flat.data() + flat.size());
  CHECK(p == flat.data() + flat.size());
  CHECK(back.exact_times());
  const SizeLog::File& f = back.files().at(kFile);
  CHECK(f.has_set);
  CHECK(f.set.size == 7);
  CHECK(f.epoch == 1);
  REQUIRE(f.grows.size() == 1);
  CHECK(f.grows[0].size == 100);
  CHECK(f.grows[0].epoch0 == 1);
}

TEST_CASE("a replayed file at another size than the plan's is reported") {
  TempDir tmp;
  mpior::trace::Plan plan = one_file_plan();
  auto target = prepare_target(plan, {tmp.path()});
  SizeLog log;
  log.grow(kFile, write_at(0, 0, 4096), 4096);
  std::string real = target->sandbox->display(target->mapped[kFile]);
  int fd = ::open(real.c_str(), O_WRONLY | O_CREAT, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, 4096) == 0);
  ::close(fd);
  SizeCheck ok = check_final_sizes(plan, *target, {&log});
  CHECK(ok.checked == 1);
  CHECK(ok.mismatches.empty());
  REQUIRE(::truncate(real.c_str(), 1000) == 0);  // as a late truncation would leave it
  SizeCheck wrong = check_final_sizes(plan, *target, {&log});
  REQUIRE(wrong.mismatches.size() == 1);
  CHECK(wrong.mismatches[0].got == 1000);
  CHECK(describe(wrong.mismatches[0]) == "/out/data ended 1000 bytes, the plan says 4096 bytes");
}
