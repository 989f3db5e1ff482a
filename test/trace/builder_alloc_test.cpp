// The builder's steady state allocates nothing: global operator new is
// counted in this test program (the count is only read here).
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <new>

#include "trace/arg_setters.hpp"
#include "trace/builder.hpp"

namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using namespace mpior::trace;

namespace {

// Allocations made while appending `iterations` more iterations of a loop
// the builder has already seen many times.
template <typename Iteration>
uint64_t allocations_in_steady_state(BuilderOptions opt, Iteration iteration) {
  StreamBuilder b(opt);
  int64_t t = 0;
  for (int i = 0; i < 300; ++i) iteration(b, i, t);
  uint64_t before = g_allocations.load();
  for (int i = 300; i < 3300; ++i) iteration(b, i, t);
  return g_allocations.load() - before;
}

void append(StreamBuilder& b, Kind kind, uint64_t site, int64_t& t, int64_t offset) {
  RawEvent ev;
  ev.kind = kind;
  ev.callsite = site;
  ev.start = t += 100 + offset % 7;
  ev.end = t += 30;
  io_args_mut(ev).offset() = offset;
  io_args_mut(ev).count() = 4096;
  ev.ret = 4096;
  b.append(ev);
}

}  // namespace

TEST_CASE("a steady loop of one call allocates nothing", "[builder][alloc]") {
  for (bool lossless : {false, true}) {
    auto n = allocations_in_steady_state(BuilderOptions{lossless}, [](StreamBuilder& b, int i, int64_t& t) {
      append(b, Kind::pwrite, 1, t, int64_t(i) * 4096);
    });
    REQUIRE(n == 0);
  }
}

TEST_CASE("a steady loop nest allocates nothing", "[builder][alloc]") {
  auto n = allocations_in_steady_state(BuilderOptions{}, [](StreamBuilder& b, int i, int64_t& t) {
    append(b, Kind::open, 1, t, 0);
    for (int j = 0; j < 2 + i % 5; ++j) append(b, Kind::pwrite, 2, t, int64_t(i) * 100000 + j * 4096);
    append(b, Kind::close, 3, t, 0);
  });
  REQUIRE(n == 0);
}

TEST_CASE("iterations longer than the match buffer allocate nothing once seen", "[builder][alloc]") {
  BuilderOptions opt;
  opt.fold_pending = 8;
  auto n = allocations_in_steady_state(opt, [](StreamBuilder& b, int i, int64_t& t) {
    append(b, Kind::open, 1, t, 0);
    for (int j = 0; j < 20; ++j) append(b, Kind::pwrite, 2, t, int64_t(i) * 100000 + j * 4096);
  });
  REQUIRE(n == 0);
}
