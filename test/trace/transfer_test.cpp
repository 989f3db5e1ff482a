#include "trace/transfer.hpp"

#include <catch2/catch.hpp>
#include <set>
#include <string_view>

#include "trace/arg_setters.hpp"

using namespace mpior::trace;

namespace {

Event at(Kind k, uint8_t depth) {
  Event ev;
  ev.kind = k;
  ev.depth = depth;
  return ev;
}

Event aio_done(int64_t req, int64_t submit_depth) {
  Event ev = at(Kind::mpior_aio_done, 2);
  aio_args_mut(ev).aio_req() = req;
  aio_args_mut(ev).submit_depth() = submit_depth;
  aio_args_mut(ev).lio_op() = kAioWrite;
  ev.ret = 4096;
  return ev;
}

}  // namespace

TEST_CASE("levels: the application's calls, those under its MPI-IO calls, other nested calls") {
  LevelTracker t;
  CHECK(t.observe(0, at(Kind::write, 0)) == Level::app);
  CHECK(t.observe(0, at(Kind::MPI_File_write_all, 0)) == Level::app);
  CHECK(t.observe(0, at(Kind::pwrite, 1)) == Level::mpiio);
  CHECK(t.observe(0, at(Kind::MPI_Barrier, 0)) == Level::app);
  CHECK(t.observe(0, at(Kind::write, 1)) == Level::nested);
  CHECK(t.observe(0, at(Kind::fwrite, 0)) == Level::app);
  CHECK(t.observe(0, at(Kind::write, 1)) == Level::nested);
}

TEST_CASE("levels: an AIO completion belongs where its submit was") {
  LevelTracker t;
  t.observe(0, at(Kind::MPI_File_iwrite_at, 0));
  Event submit = at(Kind::aio_write, 1);
  aio_args_mut(submit).aio_req() = 7;
  CHECK(t.observe(0, submit) == Level::mpiio);
  t.observe(0, at(Kind::MPI_Wait, 0));                   // ROMIO learns of the completion under the Wait
  CHECK(t.observe(1, aio_done(7, 1)) == Level::nested);  // another rank's request 7
  CHECK(t.observe(0, aio_done(7, 1)) == Level::mpiio);
  CHECK(t.observe(0, aio_done(8, 0)) == Level::app);     // submitted by the application
  CHECK(t.observe(0, aio_done(9, 1)) == Level::nested);  // submitted under some other call
  Transfer out[2];
  REQUIRE(transfers(aio_done(7, 1), out) == 1);
  CHECK((out[0].write && out[0].bytes == 4096));
}

TEST_CASE("op class names follow the enum, every family's") {
  std::set<std::string_view> seen;
  for (size_t i = 0; i <= size_t(OpClass::mpiio_block); ++i) {
    std::string_view n = name(OpClass(i));
    CHECK(!n.empty());
    CHECK(seen.insert(n).second);
  }
  CHECK(name(OpClass::adone) == "adone");
  CHECK(name(OpClass::remap) == "remap");
  CHECK(name(OpClass::member) == "member");
  CHECK(name(OpClass::mpiio_open) == "mpiio_open");
  CHECK(name(OpClass::mpiio_block) == "mpiio_block");
}
