// The bytes every document encodes to. The checksums below are of bodies
// written by the format versions of trace/format.hpp: a failure here is a
// change of a file format (bump its version, then update the checksum).
// Every body starts with the kind table's fingerprint, which refuses files
// of another kind table by itself: a new kind changes the checksums alone.
#include <zstd.h>

#include <catch2/catch.hpp>
#include <cstdio>

#include "trace/arg_setters.hpp"
#include "trace/builder.hpp"
#include "trace/format.hpp"

using namespace mpior::trace;

namespace {

// CRC-32C and length of a file's body, decompressed: "crc/length".
std::string body_of(const std::vector<uint8_t>& file) {
  constexpr size_t kHeader = 8 + 4 + 1 + 8 + 8;
  REQUIRE(file.size() > kHeader);
  uint64_t raw = 0, stored = 0;
  for (int i = 7; i >= 0; --i) raw = raw << 8 | file[13 + size_t(i)];
  for (int i = 7; i >= 0; --i) stored = stored << 8 | file[21 + size_t(i)];
  std::vector<uint8_t> body(file.begin() + kHeader, file.begin() + long(kHeader + stored));
  if (file[12] == 1) {
    std::vector<uint8_t> out(raw);
    REQUIRE(ZSTD_decompress(out.data(), out.size(), body.data(), body.size()) == raw);
    body = std::move(out);
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x/%zu", crc32c(body), body.size());
  return buf;
}

// A stream of every shape the encoding knows: loops, rank-variant values,
// timing histograms; lossless (exact times) or not.
Stream stream_of(bool lossless, int32_t rank) {
  StreamBuilder b(BuilderOptions{.lossless = lossless});
  int64_t now = 1000;
  for (int i = 0; i < 40; ++i) {
    RawEvent ev;
    ev.kind = i % 5 == 4 ? Kind::MPI_Barrier : Kind::pwrite;
    ev.callsite = 0x400000 + uint64_t(i % 5);
    ev.depth = uint8_t(i % 2);
    ev.start = now;
    ev.end = now + 30 + (i * 37) % 900;  // durations over several histogram bins
    now = ev.end + 100 + (i * 13) % 70;
    if (ev.kind == Kind::pwrite) {
      auto a = file_args_mut(ev);
      a.handle() = 3;
      a.file() = 3;
      a.offset() = 4096 * (i + 40 * rank);
      a.count() = 4096;
      ev.ret = 4096;
    } else {
      mpi_args_mut(ev).coll_seq() = i / 5;
    }
    b.append(ev);
  }
  return b.snapshot(rank, 0);
}

ProcessInfo process_of(int32_t rank) {
  ProcessInfo p;
  p.job_id = 0x1234567890ABCDEF;
  p.rank = rank;
  p.size = 4;
  p.mpi = p.finished = true;
  p.pruning = rank % 2;
  p.pid = 4711 + rank;
  p.host = "node" + std::to_string(rank / 2);
  p.exe = "/usr/bin/app";
  p.cmdline = "app -n 4";
  p.cwd = "/scratch";
  p.clock_mono_ns = 5000000 + rank;
  p.clock_real_ns = 1700000000000000000 + rank;
  p.end_ns = 900000;
  p.clock_offset_ns = -250 * rank;
  p.cpu_wait_ns = 777;
  p.placement = {2, 48};
  return p;
}

RankTrace rank_trace() {
  RankTrace t;
  t.process = process_of(1);
  t.files = {{"<stdin>", -1}, {"/scratch/out_1", 0101}, {"/scratch/in", 0}};
  t.comms = {{0, CommOrigin::world, -1, 0, 0, 0, {0, 1, 2, 3}},
             {1, CommOrigin::self, -1, 0, 0, 0, {1}},
             {2, CommOrigin::split, 0, 3, 1, -2, {1, 3}}};
  t.streams = {stream_of(true, 1), stream_of(false, 1)};
  t.pruned[size_t(Kind::MPI_Barrier)] = {7, 1234};
  t.excluded[size_t(Kind::open)] = {2, 99};
  t.unrecorded[size_t(Kind::write)] = {1, 5};
  t.spill_segments = 3;
  t.journaled = {{0, 41}, {1, 7}};
  return t;
}

JobInfo job() {
  JobInfo j;
  j.job_id = 0x1234567890ABCDEF;
  j.size = 4;
  j.state = JobState::complete;
  j.cmdline = "app -n 4";
  j.cwd = "/scratch";
  j.host = "node0";
  j.start_real_ns = 1700000000000000000;
  j.ranks_written = {0, 1, 2, 3};
  return j;
}

Plan plan() {
  Plan p;
  p.job = job();
  p.ranks.resize(4);
  for (int32_t r = 0; r < 4; ++r) {
    PlanRank& pr = p.ranks[size_t(r)];
    pr.host = "node" + std::to_string(r / 2);
    pr.cwd = "/scratch";
    pr.traced_ns = 900000 + r;
    pr.files = {0, 1 + r};
    pr.comms = {0, r % 2 ? -1 : 1};
    pr.start_ns = 20 * r;
    pr.cpu_wait_ns = 5 * r;
    pr.placement = {1, 48};
  }
  p.files = {{"/scratch/in", false, true, false, 65536}, {"/scratch/out", true, false, true, 0}};
  p.comms = {{{0, 1, 2, 3}, CommOrigin::world}, {{0, 2}, CommOrigin::split}};
  p.streams = {stream_of(false, 0)};
  p.pruned[size_t(Kind::MPI_Barrier)] = {3, 300};
  p.extrap.target = 4;
  p.extrap.inputs = {"t2", "t3"};
  p.extrap.input_ranks = {2, 3};
  p.extrap.notes = {{0, 1, -1, "offset", "item 0 value = 4096*r", "weak scaling"}};
  p.missing = {3};
  return p;
}

MergedJob merged() {
  MergedJob m;
  m.job_id = 0x1234567890ABCDEF;
  m.size = 4;
  m.files = {{"/scratch/out_0", 0101}, {"/scratch/out_1", 0101}, {"/scratch/in", 0}};
  m.comms = {{0, CommOrigin::world, -1, 0, 0, 0, {0, 1, 2, 3}},
             {1, CommOrigin::self, -1, 0, 0, 0, {0}},
             {1, CommOrigin::self, -1, 0, 0, 0, {1}}};
  m.streams = {stream_of(false, 0)};
  for (int32_t r = 0; r < 2; ++r) {
    MergedRank mr;
    mr.process = process_of(r);
    mr.files = {r, 2};
    mr.comms = {0, 1 + r};
    mr.pruned[size_t(Kind::MPI_Barrier)] = {uint64_t(7 + r), 1234};
    m.ranks.push_back(mr);
  }
  return m;
}

}  // namespace

TEST_CASE("documents encode to the bytes of their format versions", "[format][bytes]") {
  RankTrace t = rank_trace();
  REQUIRE(decode_rank_trace(encode(t), "t") == t);
  CHECK(body_of(encode(t)) == "331b3bbc/3000");
  JobInfo j = job();
  CHECK(body_of(encode(j)) == "dcbd359f/57");
  j.trace_files = {{"rank-000000.mpior", {0}}, {"agg-0.mpior", {1, 2, 3}}};
  REQUIRE(decode_job(encode(j), "j") == j);
  CHECK(body_of(encode(j)) == "795badf1/94");
  Plan p = plan();
  REQUIRE(decode_plan(encode(p), "p") == p);
  CHECK(body_of(encode(p)) == "82b5ede1/1536");
  SpillSegment s{1, 2, stream_of(true, 1)};
  CHECK(body_of(encode(s)) == "1fa33843/1568");
  MergedJob m = merged();
  REQUIRE(decode_merged_job(encode(m), "m") == m);
  CHECK(body_of(encode(m)) == "570bfdd9/1165");
}

// A job record written before the job's clean finalize has no layout: its
// optional tail is absent, and it reads as a job of rank files.
TEST_CASE("a job file's layout is an optional tail, checked against the job", "[format]") {
  JobInfo j = job();
  REQUIRE(decode_job(encode(j), "job").trace_files.empty());
  j.trace_files = {{"rank-000000.mpior", {0, 1, 2, 3}}};
  REQUIRE(decode_job(encode(j), "job") == j);
  j.trace_files[0].ranks.push_back(4);
  REQUIRE_THROWS_WITH(decode_job(encode(j), "job"), Catch::Contains("rank 4 outside the job"));
  j.trace_files = {{"../escape", {0}}};
  REQUIRE_THROWS_WITH(decode_job(encode(j), "job"), Catch::Contains("bad trace file name"));
}
