// What a periodic flush costs the application's thread (bench.py section
// `flush`): one thread records pread/pwrite events at random offsets (like
// test/apps/random_io), one every 2 us, into its ThreadRecorder while
// another snapshots that recorder, as the flush thread does every
// MPIOR_FLUSH_INTERVAL. For growing folded sizes it prints the snapshot's
// time (the builder's work: what a flush held the recorder's lock for when
// it snapshotted under the lock), the longest the recording thread's
// record() took while a snapshot was under way, and the longest it took in
// an equally long window without one (its own chunk folding, the
// scheduler): medians over the repetitions.
// usage: flush_lock_bench [max_mib=8] [repetitions=7]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "preload/recorder.hpp"
#include "preload/trace_clock.hpp"

using namespace mpior;
using Clock = std::chrono::steady_clock;

namespace {

int64_t ns_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

class Source {
 public:
  trace::RawEvent next() {
    x_ ^= x_ << 13, x_ ^= x_ >> 7, x_ ^= x_ << 17;
    trace::RawEvent ev;
    const bool write = (n_++ & 1) != 0;
    ev.kind = write ? trace::Kind::pwrite : trace::Kind::pread;
    ev.callsite = write ? 0x401000 : 0x401100;
    ev.args[trace::arg::handle] = 3;
    ev.args[trace::arg::offset] = int64_t(x_ % 16384) * 64;
    ev.args[trace::arg::count] = ev.ret = 64;
    ev.start = preload::clock::now();
    ev.end = ev.start + 100;
    return ev;
  }

 private:
  uint64_t x_ = 88172645463325252ull, n_ = 0;
};

struct Row {
  size_t bytes;
  int64_t snapshot_ns, worst_during_ns, worst_without_ns;
};

int64_t median(std::vector<int64_t> v) {
  std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const double max_mib = argc > 1 ? std::atof(argv[1]) : 8;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 7;
  if (max_mib <= 0 || reps <= 0) {
    std::fprintf(stderr, "usage: flush_lock_bench [max_mib=8] [repetitions=7]\n");
    return 2;
  }
  preload::clock::start(false);
  preload::ThreadRecorder rec(0, trace::BuilderOptions{});
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> fill_until{0}, recorded{0};
  std::atomic<int64_t> worst{0};
  Source source;
  // The application's thread: records up to fill_until at full speed, then
  // one call every 2 us (its I/O), timing every record().
  std::thread app([&] {
    uint64_t n = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      const bool filling = n < fill_until.load(std::memory_order_acquire);
      trace::RawEvent ev = source.next();
      auto t0 = Clock::now();
      rec.record(ev);
      int64_t ns = ns_since(t0);
      recorded.store(++n, std::memory_order_release);
      if (filling) continue;
      if (ns > worst.load(std::memory_order_relaxed)) worst.store(ns, std::memory_order_relaxed);
      while (ns_since(t0) < 2000) {
      }
    }
  });
  // The worst record() so far, once a record that began before now has
  // ended (one blocked by the snapshot ends after it).
  auto worst_after = [&] {
    const uint64_t at = recorded.load();
    while (recorded.load() < at + 2) std::this_thread::yield();
    return worst.exchange(0);
  };
  std::vector<Row> rows;
  for (double mib = 0.5; mib <= max_mib + 1e-9; mib *= 2) {
    size_t bytes = 0;
    while ((bytes = rec.memory_bytes()) < size_t(mib * (1 << 20))) {
      const uint64_t events = recorded.load() + 20000;
      fill_until.store(events, std::memory_order_release);
      while (recorded.load(std::memory_order_acquire) < events) std::this_thread::yield();
    }
    std::vector<int64_t> snap, during, without;
    for (int r = 0; r < reps; ++r) {
      worst.store(0);
      auto t0 = Clock::now();
      trace::Stream s = rec.snapshot(0);
      const int64_t took = ns_since(t0);
      during.push_back(worst_after());
      snap.push_back(took);
      std::this_thread::sleep_for(std::chrono::nanoseconds(took));  // a window as long, no snapshot
      without.push_back(worst_after());
      if (s.leaves.empty()) return 1;  // the snapshot holds the events
    }
    rows.push_back({bytes, median(snap), median(during), median(without)});
  }
  stop.store(true);
  app.join();
  std::printf("%-12s %14s %22s %22s\n", "folded MiB", "snapshot us", "worst record() during", "worst record() without");
  for (const Row& r : rows)
    std::printf("%-12.1f %14.0f %19.0f us %19.0f us\n", double(r.bytes) / (1 << 20), double(r.snapshot_ns) / 1e3,
                double(r.worst_during_ns) / 1e3, double(r.worst_without_ns) / 1e3);
  std::printf("events recorded: %llu\n", (unsigned long long)recorded.load());
  return 0;
}
