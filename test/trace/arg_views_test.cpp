#include "trace/arg_views.hpp"

#include <catch2/catch.hpp>
#include <stdexcept>

using namespace mpior::trace;

namespace {

Event at(Kind k) {
  Event ev;
  ev.kind = k;
  for (int i = 0; i < kNumArgs; ++i) ev.args[size_t(i)] = 100 + i;
  return ev;
}

bool posix_or_stdio(Kind k) { return info(k).family == Family::posix || info(k).family == Family::stdio; }
bool mpi_records(Kind k) {
  OpClass op = info(k).op;
  return is_mpi(k) || op == OpClass::complete || op == OpClass::member || op == OpClass::topology;
}

}  // namespace

// Which kinds each view may read, written out here apart from the lists'
// @view/@uses lines: a line that lets a view read another family's slots
// fails this.
TEST_CASE("views: each fits only the kinds whose family fills its slots") {
  for (size_t i = 0; i < kNumKinds; ++i) {
    Kind k = Kind(i);
    INFO(name(k));
    CHECK(IoArgs::fits(k) == (is_io(k) || is_mpiio(k)));
    CHECK(FileArgs::fits(k) == posix_or_stdio(k));
    CHECK(AioArgs::fits(k) == (info(k).family == Family::aio));
    CHECK(MapArgs::fits(k) == (info(k).family == Family::mmap));
    CHECK(MpiioArgs::fits(k) == is_mpiio(k));
    CHECK(MpiArgs::fits(k) == mpi_records(k));
    CHECK_FALSE((FileArgs::fits(k) && MpiArgs::fits(k)));
  }
}

// The file families' kinds and MPI-IO's view blocks index the file table in
// file; rename, link and the copies in file2 too; MPI calls not at all.
TEST_CASE("file_slots: the slots naming files, from the lists' names_file and two_files") {
  for (size_t i = 0; i < kNumKinds; ++i) {
    Kind k = Kind(i);
    INFO(name(k));
    bool names = is_io(k) || is_mpiio(k);
    OpClass op = info(k).op;
    bool two = op == OpClass::rename || op == OpClass::link || op == OpClass::copy;
    REQUIRE(file_slots(k).size() == (names ? (two ? 2u : 1u) : 0u));
    if (names) CHECK(file_slots(k)[0] == arg::file);
    if (two) CHECK(file_slots(k)[1] == arg::file2);
  }
  REQUIRE(file_slots(Kind::mpior_block).size() == 1);
  CHECK(file_slots(Kind::mpior_block)[0] == arg::file);
  CHECK(file_slots(Kind::MPI_Send).empty());
}

TEST_CASE("views: taking one for another family's record throws; try_ says none") {
  Event send = at(Kind::MPI_Send), pread = at(Kind::pread), block = at(Kind::mpior_block);
  CHECK_THROWS_AS(file_args(send), std::logic_error);
  CHECK_THROWS_AS(io_args(send), std::logic_error);
  CHECK_THROWS_AS(mpi_args(pread), std::logic_error);
  CHECK_THROWS_AS(aio_args(pread), std::logic_error);
  CHECK_THROWS_AS(mpiio_args(pread), std::logic_error);
  CHECK_THROWS_WITH(map_args(send), Catch::Contains("MapArgs") && Catch::Contains("MPI_Send"));
  CHECK_FALSE(try_file_args(send).has_value());
  CHECK_FALSE(try_mpi_args(block).has_value());
  REQUIRE(try_io_args(block).has_value());
  CHECK(try_io_args(block)->count() == 100 + arg::count);
}

TEST_CASE("views: fields read and write the slots trace/event.hpp names") {
  Event pread = at(Kind::pread);
  FileArgs f = file_args(std::as_const(pread));
  CHECK(f.handle() == 100 + arg::handle);
  CHECK(f.offset() == 100 + arg::offset);
  CHECK(f.handle2() == 100 + arg::handle2);
  file_args(pread).offset() = 4096;  // a writable record gives writable fields
  CHECK(pread.args[arg::offset] == 4096);
  RawEvent raw = at(Kind::MPI_Sendrecv).raw();
  mpi_args(raw).peer2() = 3;
  CHECK(raw.args[arg::peer2] == 3);
  CHECK(mpi_args(std::as_const(raw)).tag2() == 100 + arg::tag2);
  Event done = at(Kind::mpior_aio_done);
  CHECK(aio_args(done).submit_kind() == 100 + arg::submit_kind);
  Event set_view = at(Kind::MPI_File_set_view);
  CHECK(mpiio_args(set_view).fextent() == 100 + arg::fextent);
}

TEST_CASE("facts: stated by the lists, not by names") {
  CHECK(has_fact(Kind::pread, fact::positional));
  CHECK(has_fact(Kind::pwritev2, fact::positional));
  CHECK(has_fact(Kind::__pread_chk, fact::positional));
  CHECK_FALSE(has_fact(Kind::read, fact::positional));
  CHECK_FALSE(has_fact(Kind::fread, fact::positional));
  CHECK(has_fact(Kind::fstat, fact::by_fd));
  CHECK(has_fact(Kind::__fxstat64, fact::by_fd));
  CHECK_FALSE(has_fact(Kind::fstatat, fact::by_fd));
  CHECK(has_fact(Kind::truncate, fact::by_path));
  CHECK_FALSE(has_fact(Kind::ftruncate, fact::by_path));
  CHECK(has_fact(Kind::lstat64, fact::nofollow));
  CHECK(has_fact(Kind::__lxstat, fact::nofollow));
  CHECK_FALSE(has_fact(Kind::stat, fact::nofollow));
  CHECK(has_fact(Kind::fdatasync, fact::datasync));
  CHECK_FALSE(has_fact(Kind::fsync, fact::datasync));
  CHECK(has_fact(Kind::syncfs, fact::whole_fs));
  CHECK(has_fact(Kind::sync_file_range, fact::ranged));
  CHECK_FALSE(has_fact(Kind::fsync, fact::whole_fs | fact::ranged));
  CHECK(has_fact(Kind::fdopen, fact::by_fd));
  CHECK(has_fact(Kind::fdopendir, fact::by_fd));
  CHECK_FALSE(has_fact(Kind::fopen, fact::by_fd));
  CHECK_FALSE(has_fact(Kind::opendir, fact::by_fd));
  CHECK(has_fact(Kind::MPI_Exscan, fact::prefix));
  CHECK(has_fact(Kind::MPI_Neighbor_alltoall, fact::neighbor));
  CHECK_FALSE(has_fact(Kind::MPI_Allreduce, fact::prefix | fact::neighbor));
}

TEST_CASE("collectives: one table of how their members meet") {
  int meeting = 0;
  for (int op = 0; op <= int(kLastOpClass); ++op) meeting += is_meeting(OpClass(op));
  CHECK(meeting == 6);
  CHECK(is_rooted(OpClass::scatter));
  CHECK(is_all_to_one(OpClass::gather));
  CHECK_FALSE(is_meeting(OpClass::comm_create));
  CHECK(is_collective(OpClass::comm_free));
}
