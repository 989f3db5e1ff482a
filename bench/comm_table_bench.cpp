// What a periodic flush spends on the communicator table (bench.py section
// `comm_table`), for a rank that made N communicators (MPICH's
// comm/ctxalloc makes 200,000 per rank: dup and free in batches of 200).
// Per table size: "whole", the flush before the table was kept encoded
// (copy of the table under the MPI state's lock, then the rank trace
// encoded with it), and "appended", the flush now (the entries made since
// the last flush, 1000 here, encoded under the lock and appended to the
// encoded table, then the rank trace encoded with it: the table's whole
// 256 KiB frames were compressed by earlier flushes). The lock column is
// how long the flush held the lock the application's communicator calls
// take; the trace column includes compressing the trace. Medians.
// usage: comm_table_bench [max_entries=200000] [repetitions=5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "preload/mpi_state.hpp"

using namespace mpior;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kNewPerFlush = 1000;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Handles are only the table's keys here: distinct values MPICH would not give.
MPI_Comm handle(size_t i) { return MPI_Comm(0x44000000 + int(i)); }

struct Row {
  size_t entries, bytes, appended_bytes;
  double whole_lock, whole_total, appended_lock, appended_total;
};

Row measure(size_t entries, int reps) {
  preload::mpi::MpiState st;
  st.init(0, 2);
  trace::EncodedComms enc;
  for (size_t i = 0; i < entries - kNewPerFlush; ++i) st.add_comm_like(handle(i), 0, i);
  st.encode_comms(&enc);  // the last flush's, and its compressed frames
  (void)trace::encode(trace::RankTrace{}, enc);
  for (size_t i = entries - kNewPerFlush; i < entries; ++i) st.add_comm_like(handle(i), 0, i);
  std::vector<double> wl, wt, al, at;
  size_t bytes = 0, appended_bytes = 0;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    trace::RankTrace whole;
    whole.comms = st.comms();
    wl.push_back(ms_since(t0));
    bytes = trace::encode(whole).size();
    wt.push_back(ms_since(t0));
    trace::EncodedComms mine = enc;  // as the last flush left it
    trace::RankTrace bare;
    t0 = Clock::now();
    st.encode_comms(&mine);
    al.push_back(ms_since(t0));
    std::vector<uint8_t> out = trace::encode(bare, mine);
    at.push_back(ms_since(t0));
    if (r == 0 && trace::decode_rank_trace(out, "appended").comms != whole.comms) {
      std::fprintf(stderr, "comm_table_bench: the appended table's trace differs from the whole table's\n");
      std::exit(1);
    }
    appended_bytes = out.size();
  }
  return {entries, bytes, appended_bytes, median(wl), median(wt), median(al), median(at)};
}

}  // namespace

int main(int argc, char** argv) {
  size_t max_entries = argc > 1 ? size_t(std::atol(argv[1])) : 200000;
  int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  if (max_entries < 2 * kNewPerFlush || reps < 1) {
    std::fprintf(stderr, "usage: comm_table_bench [max_entries>=2000] [repetitions>=1]\n");
    return 2;
  }
  std::vector<Row> rows;
  for (size_t n = 2 * kNewPerFlush; n < max_entries; n *= 5) rows.push_back(measure(n, reps));
  rows.push_back(measure(max_entries, reps));
  std::printf("%-10s %10s %16s %16s %10s %16s %16s\n", "entries", "trace KiB", "whole: lock ms", "whole: flush ms",
              "KiB", "appended: lock", "appended: flush");
  for (const Row& r : rows)
    std::printf("%-10zu %10.0f %16.2f %16.2f %10.0f %13.3f ms %13.2f ms\n", r.entries, double(r.bytes) / 1024,
                r.whole_lock, r.whole_total, double(r.appended_bytes) / 1024, r.appended_lock, r.appended_total);
  return 0;
}
