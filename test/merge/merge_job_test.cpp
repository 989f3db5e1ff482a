// The job merged at finalize (merge_job.hpp): ranks' traces merged step by
// step as the tracer's tree does, encoded and decoded (merged.mpior), give
// every rank back its own process record, tables and events; an SPMD job's
// merged file stays near one rank's size.
#include "merge/merge_job.hpp"

#include <fcntl.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <set>

#include "merge/merge.hpp"
#include "postproc/merge_check.hpp"
#include "test/postproc/fixture.hpp"
#include "test/postproc/spmd_rank.hpp"
#include "trace/cursor.hpp"
#include "trace/format.hpp"

using namespace mpior;
using namespace mpior::test;
using trace::Kind;

namespace {

// The merge tests' SPMD rank, with a communicator per half, a pid and a host.
trace::RankTrace rank_trace(int32_t r, int32_t size, bool irregular) {
  trace::RankTrace t = spmd_rank_trace(r, size, irregular);
  trace::CommEntry half{1, trace::CommOrigin::split, 0, 1, r % 2, r, {}};
  for (int32_t m = r % 2; m < size; m += 2) half.members.push_back(m);
  t.comms.push_back(half);
  t.process.pid = 1000 + r;
  t.process.host = r < size / 2 ? "node0" : "node1";
  t.process.clock_offset_ns = (r % 3 - 1) * 4567;  // aligned clocks differ per rank
  t.process.cpu_wait_ns = r * 1000 + 7;            // and their waits for a CPU
  t.process.placement = {r % 3 == 0 ? 2 : 1, 8};   // and where they could run
  return t;
}

// What the tracer does: parts of `radix` consecutive nodes merged, level by level.
trace::MergedJob tree(std::vector<trace::MergedJob> level, size_t radix) {
  while (level.size() > 1) {
    std::vector<trace::MergedJob> next;
    for (size_t i = 0; i < level.size(); i += radix) {
      std::vector<trace::MergedJob> parts;
      for (size_t j = i; j < std::min(level.size(), i + radix); ++j) parts.push_back(std::move(level[j]));
      next.push_back(merge::merge_jobs(std::move(parts), 4));
    }
    level = std::move(next);
  }
  return std::move(level.front());
}

}  // namespace

TEST_CASE("a job merged over a tree gives every rank back", "[postproc][merge][job]") {
  for (bool irregular : {false, true})
    for (int32_t size : {1, 2, 5, 16})
      for (size_t radix : {2, 4}) {
        INFO("ranks " << size << " radix " << radix << (irregular ? " irregular" : " SPMD"));
        std::vector<trace::RankTrace> ranks;
        std::vector<trace::MergedJob> leaves;
        for (int32_t r = 0; r < size; ++r) {
          ranks.push_back(rank_trace(r, size, irregular));
          leaves.push_back(merge::job_of_rank(ranks.back()));
        }
        trace::MergedJob merged = tree(std::move(leaves), radix);
        std::vector<uint8_t> bytes = trace::encode(merged);
        trace::MergedJob read = trace::decode_merged_job(bytes, "merged.mpior");
        REQUIRE(read == merged);
        std::set<std::string> distinct;  // each file entry once
        for (const trace::RankTrace& t : ranks)
          for (const trace::FileEntry& f : t.files) distinct.insert(f.path + '/' + std::to_string(f.flags));
        REQUIRE(read.files.size() == distinct.size());
        if (!irregular) {
          REQUIRE(read.streams.size() == 1);
          // one rank's trace twice at most, besides what each rank keeps of its own
          // (process record, table indices, its own file and communicator)
          INFO("merged " << bytes.size() << " B, one rank " << trace::encode(ranks[0]).size() << " B");
          REQUIRE(bytes.size() < 2 * trace::encode(ranks[0]).size() + 48 * size_t(size));
        }
        std::vector<trace::RankTrace> back = merge::rank_traces(read, "merged.mpior");
        REQUIRE(back.size() == ranks.size());
        for (size_t i = 0; i < back.size(); ++i) {
          const trace::RankTrace &own = ranks[i], &t = back[i];
          REQUIRE(t.process == own.process);
          REQUIRE(t.files == own.files);
          REQUIRE(t.comms == own.comms);
          REQUIRE(t.streams.size() == own.streams.size());
          for (size_t s = 0; s < t.streams.size(); ++s)
            REQUIRE(postproc::first_difference(own.streams[s], t.streams[s], own.process.rank) == "");
        }
      }
}

TEST_CASE("a merged job's file table: numbered paths as renumbered entries, read back byte for byte",
          "[postproc][merge][job]") {
  trace::MergedJob m = merge::job_of_rank(rank_trace(0, 1, false));
  const std::vector<std::string> paths = {"/scratch/run/out_0.dat",
                                          "/scratch/run/shared",
                                          "/scratch/run/out_1.dat",
                                          "/scratch/run/out_2.dat",
                                          "/scratch/run/out_9.dat",
                                          "/scratch/run/out_10.dat",
                                          "/scratch/run/out_7.dat",  // wider, back down
                                          "/s/rank-000041",
                                          "/s/rank-000042",
                                          "/s/rank-1000000",  // zero-padded, then wider
                                          "/s/x_9",
                                          "/s/x_0010",  // not the padding of 9's
                                          "/d1/d2/f3",
                                          "/d1/d2/f3",
                                          "/d9/d2/f3",  // the same twice; an earlier number
                                          "/n/1234567890123456789",
                                          "/n/1234567890123456790",  // past 18 digits
                                          "/n/123456789012345678",
                                          "/n/999999999999999999",
                                          "/n/000000000000000000",
                                          "",
                                          "/",
                                          "/a\n\xff"
                                          "9"};
  m.files.clear();
  for (size_t i = 0; i < paths.size(); ++i) m.files.push_back({paths[i], int64_t(i % 3) - 1});
  m.ranks[0].files.clear();
  for (size_t i = 0; i < m.files.size(); ++i) m.ranks[0].files.push_back(int32_t(i));
  REQUIRE(trace::decode_merged_job(trace::encode(m), "m") == m);
  // 4,096 ranks' own files cost a few bytes each
  trace::MergedJob many = m;
  many.files.clear();
  for (int r = 0; r < 4096; ++r) {
    many.files.push_back({"/lustre/project/run42/output/checkpoint." + std::to_string(r) + ".h5", 0101});
    if (r % 16 == 0) many.files.push_back({"/lustre/project/run42/output/group_" + std::to_string(r / 16), 01});
  }
  many.ranks[0].files = {0};
  size_t bytes = trace::encode(many).size() - trace::encode(m).size();
  INFO(bytes << " B for " << many.files.size() << " paths");
  REQUIRE(bytes < many.files.size());
  REQUIRE(trace::decode_merged_job(trace::encode(many), "m") == many);
}

TEST_CASE("merged timing splits back into counts that add up", "[postproc][merge][job]") {
  std::vector<trace::MergedJob> leaves;
  uint64_t want = 0;
  for (int32_t r = 0; r < 7; ++r) {
    trace::RankTrace t = rank_trace(r, 7, false);
    want += t.streams[0].leaves[2].gap.count();
    leaves.push_back(merge::job_of_rank(std::move(t)));
  }
  trace::MergedJob m = tree(std::move(leaves), 3);
  REQUIRE(m.streams.size() == 1);
  REQUIRE(m.streams[0].leaves[2].gap.count() == want);
  uint64_t got = 0;
  int64_t sum = 0;
  for (const trace::RankTrace& t : merge::rank_traces(m, "m")) {
    got += t.streams[0].leaves[2].gap.count();
    sum += t.streams[0].leaves[2].gap.sum();
  }
  REQUIRE(got == want);
  REQUIRE(sum == m.streams[0].leaves[2].gap.sum());
}

namespace {

// A rank whose calls take rank-dependent times, its loop running a
// rank-dependent number of times (one structure: the counts are rank variants).
trace::RankTrace timed_rank(int32_t r, int32_t size) {
  RankBuilder b(r, size);
  int32_t own = b.file("/scratch/t_" + std::to_string(r));
  b.open(own, 3, O_CREAT | O_WRONLY, 3);
  for (int64_t i = 0; i < 12 + 3 * (r % 3); ++i) {
    b.call(Kind::pwrite,
           {{trace::arg::handle, 3}, {trace::arg::file, own}, {trace::arg::offset, i * 64}, {trace::arg::count, 64}},
           64, 1000 + 397 * r + (i * 7919) % 5000);
    b.collective(Kind::MPI_Barrier, 0);
  }
  return b.finish();
}

// Each rank's time as the summary counts it: its events at the cursor's
// (mean) timing, summed.
int64_t walked_ns(const std::vector<trace::Stream>& streams, int32_t rank) {
  int64_t ns = 0;
  for (const trace::Stream& s : streams) {
    if (!trace::seq_contains(s.view(s.ranks), rank)) continue;
    trace::EventCursor c(s, rank);
    trace::Event ev;
    while (c.next(ev)) ns += ev.dur_ns + ev.gap_ns;
  }
  return ns;
}

}  // namespace

TEST_CASE("a merged job's ranks read back their own occurrences at the plan's timing", "[postproc][merge][job]") {
  for (int32_t size : {3, 7, 16}) {
    INFO("ranks " << size);
    std::vector<trace::RankTrace> ranks;
    std::vector<trace::MergedJob> leaves;
    std::vector<trace::Stream> plan;  // what mpior-post merges from rank files
    for (int32_t r = 0; r < size; ++r) {
      ranks.push_back(timed_rank(r, size));
      REQUIRE(!ranks.back().streams[0].lossless);
      leaves.push_back(merge::job_of_rank(ranks.back()));
      plan.push_back(ranks.back().streams[0]);
    }
    plan = merge::merge_streams(std::move(plan));
    REQUIRE(plan.size() == 1);
    trace::MergedJob m = tree(std::move(leaves), 4);
    REQUIRE(m.streams.size() == 1);
    std::vector<trace::RankTrace> back = merge::rank_traces(m, "m");
    std::vector<trace::Stream> again;  // the plan mpior-post makes of the merged job
    int64_t own_total = 0, back_total = 0, plan_total = 0;
    for (int32_t r = 0; r < size; ++r) {
      const trace::Stream &own = ranks[size_t(r)].streams[0], &got = back[size_t(r)].streams[0];
      for (size_t i = 0; i < own.leaves.size(); ++i) {
        INFO("rank " << r << " leaf " << i << " merged count " << m.streams[0].leaves[i].dur.count());
        REQUIRE(got.leaves[i].dur.count() == own.leaves[i].dur.count());
        REQUIRE(got.leaves[i].gap.count() == own.leaves[i].gap.count());
        own_total += own.leaves[i].dur.sum() + own.leaves[i].gap.sum();
      }
      // a rank's summary from the merged job: the rank-file plan's walk of that rank
      REQUIRE(walked_ns(back[size_t(r)].streams, r) == walked_ns(plan, r));
      back_total += walked_ns(back[size_t(r)].streams, r);
      plan_total += walked_ns(plan, r);
      again.push_back(got);
    }
    again = merge::merge_streams(std::move(again));
    REQUIRE(again.size() == 1);
    for (size_t i = 0; i < plan[0].leaves.size(); ++i) {
      const trace::Leaf &want = plan[0].leaves[i], &got = again[0].leaves[i];
      REQUIRE(got.dur.count() == want.dur.count());
      REQUIRE(got.dur.sum() == want.dur.sum());
      REQUIRE(got.dur.histogram() == want.dur.histogram());
      REQUIRE(got.dur.min() == want.dur.min());
      REQUIRE(got.dur.max() == want.dur.max());
      REQUIRE(got.dur.mean() == Approx(want.dur.mean()));
      REQUIRE(got.gap.sum() == want.gap.sum());
    }
    REQUIRE(back_total == plan_total);
    // the mean is rounded to a nanosecond at each event
    REQUIRE(std::abs(back_total - own_total) <= int64_t(size) * 200);
  }
}

// What an mpior of merged format 4 wrote: the same container with version 4
// and its checksum (the body's encoding changed with version 5).
std::vector<uint8_t> as_version(std::vector<uint8_t> bytes, uint32_t version) {
  trace::Encoder v;
  v.fixed32(version);
  std::copy(v.bytes().begin(), v.bytes().end(), bytes.begin() + 8);
  size_t end = bytes.size() - 12;  // CRC-32C, "MPIOREND"
  trace::Encoder crc;
  crc.fixed32(trace::crc32c({bytes.data(), end}));
  std::copy(crc.bytes().begin(), crc.bytes().end(), bytes.begin() + long(end));
  return bytes;
}

TEST_CASE("a merged job trace of an older or newer format is refused as such", "[postproc][merge][job]") {
  trace::MergedJob m = merge::job_of_rank(rank_trace(0, 2, false));
  std::vector<uint8_t> bytes = trace::encode(m);
  REQUIRE(trace::decode_merged_job(as_version(bytes, trace::kMergedFormatVersion), "m") == m);
  REQUIRE_THROWS_WITH(trace::decode_merged_job(as_version(bytes, 4), "x/merged.mpior"),
                      Catch::StartsWith("x/merged.mpior: format version 4 (written by an older mpior), this mpior "
                                        "reads version " +
                                        std::to_string(trace::kMergedFormatVersion)) &&
                          !Catch::Contains("corrupt"));
  REQUIRE_THROWS_WITH(trace::decode_merged_job(as_version(bytes, trace::kMergedFormatVersion + 1), "m"),
                      Catch::Contains("written by a newer mpior"));
  // rank traces keep their own version
  std::vector<uint8_t> rank = trace::encode(rank_trace(0, 2, false));
  REQUIRE(trace::decode_rank_trace(as_version(rank, trace::kFormatVersion), "r").process.rank == 0);
  REQUIRE_THROWS_WITH(trace::decode_rank_trace(as_version(rank, trace::kOldestFormatVersion - 1), "r"),
                      Catch::Contains("written by an older mpior"));
}

TEST_CASE("a damaged merged job trace is refused with one message", "[postproc][merge][job]") {
  trace::MergedJob m = merge::job_of_rank(rank_trace(0, 2, false));
  m.ranks[0].files.push_back(7);  // an index outside the file table
  std::vector<uint8_t> bytes = trace::encode(m);
  REQUIRE_THROWS_WITH(trace::decode_merged_job(bytes, "x/merged.mpior"),
                      Catch::Contains("x/merged.mpior") && Catch::Contains("outside its table"));
  trace::MergedJob two =
      merge::merge_jobs({merge::job_of_rank(rank_trace(0, 3, false)), merge::job_of_rank(rank_trace(1, 3, false))});
  two.ranks.pop_back();  // a stream names rank 1, which the file no longer holds
  REQUIRE_THROWS_WITH(merge::rank_traces(two, "y"), Catch::Contains("y: a merged stream stands for rank 1"));
}
