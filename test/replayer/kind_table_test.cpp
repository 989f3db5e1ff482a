#include "replayer/kind_table.hpp"

#include <catch2/catch.hpp>

using namespace mpior::replay;
using mpior::trace::Family;
using mpior::trace::Kind;
using mpior::trace::OpClass;

namespace {

// Handlers as plain numbers: 0 is "none registered".
using H = int;
constexpr Registration<H> kEveryFamily[] = {
    {Family::posix, std::nullopt, 1},
    {Family::stdio, std::nullopt, 2},
    {Family::aio, std::nullopt, 3},
    {Family::mmap, std::nullopt, 4},
    {Family::mpi, std::nullopt, 5},
    {Family::mpi, OpClass::init, 6},
    {Family::mpiio, std::nullopt, 7},
    {Family::internal, OpClass::complete, 8},
    {Family::internal, OpClass::member, 8},
    {Family::internal, OpClass::topology, 8},
    {Family::internal, OpClass::mpiio_block, 9},
};

}  // namespace

TEST_CASE("kind tables give each kind its family's handler, or its op class's", "[kind_table]") {
  constexpr auto table = kind_table<H>(kEveryFamily);
  STATIC_REQUIRE(every_kind_handled(table));
  CHECK(table[size_t(Kind::pwrite)] == 1);
  CHECK(table[size_t(Kind::fwrite)] == 2);
  CHECK(table[size_t(Kind::aio_read)] == 3);
  CHECK(table[size_t(Kind::mmap)] == 4);
  CHECK(table[size_t(Kind::MPI_Send)] == 5);
  // The op class's registration wins over its family's, whatever the order.
  CHECK(table[size_t(Kind::MPI_Init)] == 6);
  CHECK(table[size_t(Kind::MPI_Init_thread)] == 6);
  CHECK(table[size_t(Kind::MPI_File_write_all)] == 7);
  CHECK(table[size_t(Kind::mpior_complete)] == 8);
  CHECK(table[size_t(Kind::mpior_block)] == 9);
}

TEST_CASE("a kind no registration covers leaves the table incomplete", "[kind_table]") {
  // Without MPI-IO's family, and without one of the tracer's records.
  constexpr Registration<H> no_mpiio[] = {
      {Family::posix, std::nullopt, 1}, {Family::stdio, std::nullopt, 2}, {Family::aio, std::nullopt, 3},
      {Family::mmap, std::nullopt, 4},  {Family::mpi, std::nullopt, 5},   {Family::internal, std::nullopt, 8},
  };
  STATIC_REQUIRE(!every_kind_handled(kind_table<H>(no_mpiio)));
  CHECK(kind_table<H>(no_mpiio)[size_t(Kind::MPI_File_open)] == 0);
  constexpr Registration<H> no_member[] = {
      {Family::posix, std::nullopt, 1},
      {Family::stdio, std::nullopt, 2},
      {Family::aio, std::nullopt, 3},
      {Family::mmap, std::nullopt, 4},
      {Family::mpi, std::nullopt, 5},
      {Family::mpiio, std::nullopt, 7},
      {Family::internal, OpClass::complete, 8},
      {Family::internal, OpClass::topology, 8},
      {Family::internal, OpClass::mpiio_block, 9},
  };
  STATIC_REQUIRE(!every_kind_handled(kind_table<H>(no_member)));
  CHECK(kind_table<H>(no_member)[size_t(Kind::mpior_member)] == 0);
}

TEST_CASE("an op class's kinds with facts get the handler registered for those facts", "[kind_table]") {
  namespace fact = mpior::trace::fact;
  constexpr Registration<H> syncs[] = {
      {Family::posix, std::nullopt, 1},
      {Family::posix, OpClass::sync, 2},
      {Family::posix, OpClass::sync, 3, fact::datasync},
      {Family::posix, OpClass::sync, 4, fact::ranged},
  };
  constexpr auto table = kind_table<H>(syncs);
  STATIC_REQUIRE(no_kind_claimed_twice(table));
  CHECK(table[size_t(Kind::read)] == 1);
  CHECK(table[size_t(Kind::fsync)] == 2);
  CHECK(table[size_t(Kind::syncfs)] == 2);
  CHECK(table[size_t(Kind::fdatasync)] == 3);
  CHECK(table[size_t(Kind::sync_file_range)] == 4);
  // Two registrations for one kind's facts: which one was meant, nothing says.
  constexpr Registration<H> twice[] = {
      {Family::posix, OpClass::sync, 3, fact::datasync},
      {Family::posix, OpClass::sync, 5, fact::datasync},
  };
  STATIC_REQUIRE(!no_kind_claimed_twice(kind_table<H>(twice)));
}
