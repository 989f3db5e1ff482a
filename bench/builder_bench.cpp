// Cost of the stream builder on the tracer's hot path: ns per append for
//  (a) a steady loop of one call,
//  (b) a loop whose body is six units, one of them an inner loop,
//  (c) calls that never repeat (every call site new, random arguments),
//  (d) a loop of pread and pwrite at random offsets (test/apps/random_io: the
//      structure folds, the offsets cannot),
// (median over chunks of 4096 appends), and what the trace costs after 10^3 and 10^6 iterations: the builder's heap
// (memory_bytes) and the encoded rank trace.
// usage: builder_bench [iterations=1000000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "trace/arg_setters.hpp"
#include "trace/builder.hpp"
#include "trace/format.hpp"

using namespace mpior::trace;

namespace {

// Makes the events of one case, a chunk at a time, so generating them is not timed.
class EventSource {
 public:
  enum class Case { steady, nested, random, offsets };
  explicit EventSource(Case c) : case_(c) {}

  // Appends the events of iteration i.
  void iteration(uint64_t i, std::vector<RawEvent>& out) {
    switch (case_) {
      case Case::steady:
        out.push_back(write(1, int64_t(i) * 4096));
        break;
      case Case::nested:
        nested(i, out);
        break;
      case Case::random:
        out.push_back(random_event());
        break;
      case Case::offsets: {
        RawEvent ev = write(20 + (i & 1), int64_t(rng_() % 16384) * 64);
        ev.kind = (i & 1) ? Kind::pwrite : Kind::pread;
        file_args_mut(ev).count() = ev.ret = 64;
        out.push_back(ev);
        break;
      }
    }
  }

 private:
  RawEvent make(Kind kind, uint64_t site, int64_t dur) {
    RawEvent ev;
    ev.kind = kind;
    ev.callsite = site;
    now_ += 200 + int64_t(rng_() % 64);
    ev.start = now_;
    now_ += dur + int64_t(rng_() % 16);
    ev.end = now_;
    return ev;
  }
  RawEvent write(uint64_t site, int64_t offset) {
    RawEvent ev = make(Kind::pwrite, site, 900);
    auto a = file_args_mut(ev);
    a.handle() = 7;
    a.file() = 3;
    a.offset() = offset;
    a.count() = 4096;
    ev.ret = 4096;
    return ev;
  }
  // open; lseek; for j < 4: write; fsync; close; barrier
  void nested(uint64_t i, std::vector<RawEvent>& out) {
    RawEvent open = make(Kind::open, 10, 3000);
    file_args_mut(open).handle() = 7;
    file_args_mut(open).file() = 3;
    open.ret = 7;
    out.push_back(open);
    RawEvent seek = make(Kind::lseek, 11, 100);
    file_args_mut(seek).handle() = 7;
    seek.ret = file_args_mut(seek).offset() = int64_t(i) * 16384;
    out.push_back(seek);
    for (int j = 0; j < 4; ++j) out.push_back(write(12, int64_t(i) * 16384 + j * 4096));
    RawEvent sync = make(Kind::fsync, 13, 5000);
    file_args_mut(sync).handle() = 7;
    out.push_back(sync);
    RawEvent close = make(Kind::close, 14, 500);
    file_args_mut(close).handle() = 7;
    out.push_back(close);
    RawEvent barrier = make(Kind::MPI_Barrier, 15, 2000);
    mpi_args_mut(barrier).bytes() = 0;
    out.push_back(barrier);
  }
  RawEvent random_event() {
    RawEvent ev = make(Kind(rng_() % kNumKinds), 1000 + next_site_++, int64_t(rng_() % 5000));
    for (auto& a : ev.args) a = int64_t(rng_() % 100000);
    ev.ret = int64_t(rng_() % 100);
    return ev;
  }

  Case case_;
  std::mt19937_64 rng_{42};
  int64_t now_ = 0;
  uint64_t next_site_ = 0;
};

struct Result {
  uint64_t events = 0;
  double ns_per_append = 0;
  size_t memory = 0;
  size_t encoded = 0;
};

// The median over chunks of the time per append: the machine may be shared,
// and a chunk the scheduler interrupted should not count.
Result run(EventSource::Case c, uint64_t iterations) {
  EventSource source(c);
  StreamBuilder builder;
  std::vector<RawEvent> chunk;
  std::vector<double> chunk_ns;
  Result r;
  for (uint64_t i = 0; i < iterations;) {
    chunk.clear();
    for (; i < iterations && chunk.size() < 4096; ++i) source.iteration(i, chunk);
    auto t0 = std::chrono::steady_clock::now();
    for (const RawEvent& ev : chunk) builder.append(ev);
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    chunk_ns.push_back(ns / double(chunk.size()));
    r.events += chunk.size();
  }
  std::nth_element(chunk_ns.begin(), chunk_ns.begin() + long(chunk_ns.size() / 2), chunk_ns.end());
  r.ns_per_append = chunk_ns[chunk_ns.size() / 2];
  r.memory = builder.memory_bytes();
  RankTrace trace;
  trace.streams.push_back(builder.snapshot(0, 0));
  r.encoded = encode(trace).size();
  return r;
}

std::string size_text(size_t bytes) {
  char buf[32];
  if (bytes < 10 * 1024)
    std::snprintf(buf, sizeof buf, "%zu B", bytes);
  else if (bytes < 10 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", double(bytes) / 1024);
  else
    std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / (1024 * 1024));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t large = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  if (large < 1000) {
    std::fprintf(stderr, "builder_bench: iterations must be at least 1000\n");
    return 2;
  }
  struct Row {
    const char* name;
    EventSource::Case c;
    uint64_t large;
  };
  // Calls that never repeat keep one position each: 10^5 of them is enough to time.
  const Row rows[] = {{"(a) steady 1-event loop", EventSource::Case::steady, large},
                      {"(b) 6-unit body, inner loop", EventSource::Case::nested, large},
                      {"(c) random, no repeats", EventSource::Case::random, std::min<uint64_t>(large, 100000)},
                      {"(d) pread/pwrite, random offsets", EventSource::Case::offsets, large}};
  std::printf("%-34s %12s %10s %12s %12s %12s %12s\n", "case", "iterations", "ns/append", "memory@1e3", "memory@N",
              "encoded@1e3", "encoded@N");
  for (const Row& row : rows) {
    Result small = run(row.c, 1000), big = run(row.c, row.large);
    std::printf("%-34s %12llu %10.1f %12s %12s %12s %12s\n", row.name, (unsigned long long)row.large, big.ns_per_append,
                size_text(small.memory).c_str(), size_text(big.memory).c_str(), size_text(small.encoded).c_str(),
                size_text(big.encoded).c_str());
  }
  return 0;
}
