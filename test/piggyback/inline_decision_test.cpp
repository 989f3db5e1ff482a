#include "preload/piggyback/inline_decision.hpp"

#include <catch2/catch.hpp>
#include <cstring>
#include <functional>
#include <vector>

#include "preload/piggyback/node_array.hpp"

using mpior::piggyback::codec_for;
using mpior::piggyback::decode_flag;
using mpior::piggyback::encode_flag;
using mpior::piggyback::FlagCodec;

namespace {

// What MPI_Allreduce does to the extra element: the members' encodings
// combined by op, element by element.
template <typename T>
bool reduced(MPI_Datatype t, MPI_Op op, const std::vector<bool>& logs, std::function<T(T, T)> f) {
  FlagCodec c;
  REQUIRE(codec_for(t, op, &c));
  REQUIRE(c.size == sizeof(T));
  T acc{};
  for (size_t i = 0; i < logs.size(); ++i) {
    T x;
    encode_flag(c, &x, logs[i]);
    acc = i == 0 ? x : f(acc, x);
  }
  return decode_flag(c, &acc);
}

template <typename T>
void all_patterns(MPI_Datatype t, MPI_Op op, std::function<T(T, T)> f) {
  for (unsigned mask = 0; mask < 8; ++mask) {
    std::vector<bool> logs{bool(mask & 1), bool(mask & 2), bool(mask & 4)};
    INFO("mask " << mask);
    CHECK(reduced<T>(t, op, logs, f) == (mask != 0));
  }
}

}  // namespace

TEST_CASE("inline decision: the reduced extra element says whether any member logged", "[piggyback][inline]") {
  all_patterns<long>(MPI_LONG, MPI_SUM, [](long a, long b) { return a + b; });
  all_patterns<int>(MPI_INT, MPI_MAX, [](int a, int b) { return a > b ? a : b; });
  all_patterns<int>(MPI_INT, MPI_MIN, [](int a, int b) { return a < b ? a : b; });
  all_patterns<unsigned>(MPI_UNSIGNED, MPI_BAND, [](unsigned a, unsigned b) { return a & b; });
  all_patterns<unsigned long>(MPI_UNSIGNED_LONG, MPI_BOR, [](unsigned long a, unsigned long b) { return a | b; });
  all_patterns<int>(MPI_INT, MPI_LAND, [](int a, int b) { return int(a && b); });
  all_patterns<long long>(MPI_LONG_LONG, MPI_LOR, [](long long a, long long b) { return (long long)(a || b); });
  all_patterns<double>(MPI_DOUBLE, MPI_SUM, [](double a, double b) { return a + b; });
  all_patterns<double>(MPI_DOUBLE, MPI_MIN, [](double a, double b) { return a < b ? a : b; });
  all_patterns<float>(MPI_FLOAT, MPI_MAX, [](float a, float b) { return a > b ? a : b; });
}

TEST_CASE("inline decision: other types and operations keep the shadow exchange", "[piggyback][inline]") {
  FlagCodec c;
  CHECK_FALSE(codec_for(MPI_CHAR, MPI_SUM, &c));
  CHECK_FALSE(codec_for(MPI_SHORT, MPI_MAX, &c));
  CHECK_FALSE(codec_for(MPI_LONG, MPI_PROD, &c));
  CHECK_FALSE(codec_for(MPI_DOUBLE, MPI_LOR, &c));  // not a valid pair for MPI either
  CHECK_FALSE(codec_for(MPI_2INT, MPI_MAXLOC, &c));
  CHECK_FALSE(codec_for(MPI_LONG, MPI_REPLACE, &c));
}

TEST_CASE("node array: a synchronisation marked at its post epoch leaves later I/O pending",
          "[piggyback][node_array]") {
  mpior::piggyback::NodeArray a;
  a.resize(3);
  uint64_t posted = a.now();
  a.on_io();  // between the post and the completion
  std::vector<int32_t> all{0, 1, 2};
  a.mark_all_at(all, posted);
  CHECK(a.pending(1));  // that I/O is not ordered by the collective
  a.mark(1);
  a.mark_at(1, posted);  // an older synchronisation does not undo a newer one
  CHECK_FALSE(a.pending(1));
  uint64_t later = a.now();
  a.mark_all_at(all, later);
  CHECK_FALSE(a.pending(2));
}
