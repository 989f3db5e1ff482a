#include "preload/piggyback/node_array.hpp"

#include <catch2/catch.hpp>
#include <vector>

using mpior::piggyback::NodeArray;

TEST_CASE("node array: before any synchronisation every peer is pending", "[piggyback][node_array]") {
  NodeArray a;
  a.resize(4);
  CHECK(a.size() == 4);
  for (int32_t r = 0; r < 4; ++r) CHECK(a.pending(r));
}

TEST_CASE("node array: mark clears only the marked peer", "[piggyback][node_array]") {
  NodeArray a;
  a.resize(4);
  a.mark(2);
  CHECK_FALSE(a.pending(2));
  CHECK(a.pending(0));
  CHECK(a.pending(1));
  CHECK(a.pending(3));
}

TEST_CASE("node array: mark_all clears every listed peer", "[piggyback][node_array]") {
  NodeArray a;
  a.resize(5);
  std::vector<int32_t> members{0, 3, 4};
  a.mark_all(members);
  CHECK_FALSE(a.pending(0));
  CHECK(a.pending(1));
  CHECK(a.pending(2));
  CHECK_FALSE(a.pending(3));
  CHECK_FALSE(a.pending(4));
}

TEST_CASE("node array: an I/O call makes every peer pending again", "[piggyback][node_array]") {
  NodeArray a;
  a.resize(3);
  std::vector<int32_t> all{0, 1, 2};
  a.mark_all(all);
  for (int32_t r : all) REQUIRE_FALSE(a.pending(r));

  a.on_io();
  for (int32_t r : all) CHECK(a.pending(r));

  // Several I/O calls in a row are one "had I/O since": one mark clears it.
  a.on_io();
  a.on_io();
  a.mark(1);
  CHECK_FALSE(a.pending(1));
  CHECK(a.pending(0));
}

TEST_CASE("node array: a peer synchronised with after the I/O stays clear", "[piggyback][node_array]") {
  NodeArray a;
  a.resize(3);
  a.mark(0);
  a.on_io();
  a.mark(1);
  CHECK(a.pending(0));  // marked before the I/O
  CHECK_FALSE(a.pending(1));
  CHECK(a.pending(2));  // never marked
}

TEST_CASE("node array: pending_any ignores self and out-of-range ranks", "[piggyback][node_array]") {
  NodeArray a;
  a.resize(4);
  a.mark(1);
  a.mark(2);
  const int32_t self = 0;  // never marked: pending, but it is us

  CHECK_FALSE(a.pending_any(std::vector<int32_t>{0, 1, 2}, self));
  CHECK_FALSE(a.pending_any(std::vector<int32_t>{1, -1, 4, 99}, self));
  CHECK_FALSE(a.pending_any(std::vector<int32_t>{}, self));
  CHECK(a.pending_any(std::vector<int32_t>{0, 1, 3}, self));

  a.on_io();
  CHECK(a.pending_any(std::vector<int32_t>{0, 1}, self));
  CHECK_FALSE(a.pending_any(std::vector<int32_t>{0}, self));
}

TEST_CASE("node array: out-of-range ranks are never pending and marking them is harmless", "[piggyback][node_array]") {
  NodeArray a;
  a.resize(2);
  CHECK_FALSE(a.pending(-1));
  CHECK_FALSE(a.pending(2));
  a.mark(-1);
  a.mark(2);
  a.mark_all(std::vector<int32_t>{-5, 7});
  CHECK(a.pending(0));
  CHECK(a.pending(1));
  CHECK(a.size() == 2);
}

TEST_CASE("node array: resize makes every peer pending and changes the valid ranks", "[piggyback][node_array]") {
  NodeArray a;
  CHECK(a.size() == 0);
  CHECK_FALSE(a.pending(0));  // unsized: nobody exists yet

  a.resize(2);
  a.mark_all(std::vector<int32_t>{0, 1});
  CHECK_FALSE(a.pending(1));

  a.resize(6);
  CHECK(a.size() == 6);
  for (int32_t r = 0; r < 6; ++r) CHECK(a.pending(r));

  a.resize(3);
  CHECK(a.size() == 3);
  CHECK(a.pending(2));
  CHECK_FALSE(a.pending(3));
}
