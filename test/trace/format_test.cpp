#include "trace/format.hpp"

#include <catch2/catch.hpp>

#include "trace/arg_setters.hpp"
#include "trace/arg_views.hpp"
#include "trace/builder.hpp"
#include "trace/cursor.hpp"
#include "trace/format_fields.hpp"

using namespace mpior::trace;

namespace {

RankTrace sample_trace() {
  RankTrace t;
  t.process.job_id = 0xABCDEF;
  t.process.rank = 1;
  t.process.size = 4;
  t.process.mpi = true;
  t.process.host = "node7";
  t.process.cmdline = "./app -n 3";
  t.process.cwd = "/home/u";
  t.process.cpu_wait_ns = 1234567;
  t.process.placement = {1, 48};  // bound to one of 48 CPUs
  t.files = {{"<stdin>", -1}, {"<stdout>", -1}, {"<stderr>", -1}, {"/data/out.1", 0101}};
  t.comms = {{0, CommOrigin::world, -1, 0, 0, 0, {0, 1, 2, 3}}, {1, CommOrigin::self, -1, 0, 0, 0, {1}}};
  StreamBuilder b(BuilderOptions{.lossless = true});  // exact times: the loop folds, statistics alone would give means
  int64_t now = 100;
  for (int i = 0; i < 50; ++i) {
    RawEvent ev;
    ev.kind = Kind::pwrite;
    ev.start = now;
    ev.end = now + 40;
    now += 100;
    io_args_mut(ev).handle() = 3;
    io_args_mut(ev).file() = 3;
    io_args_mut(ev).offset() = 4096 * i;
    io_args_mut(ev).count() = 4096;
    ev.ret = 4096;
    b.append(ev);
  }
  t.streams.push_back(b.snapshot(1, 0));
  t.pruned[size_t(Kind::MPI_Barrier)] = {7, 1234};
  return t;
}

}  // namespace

TEST_CASE("a rank trace survives encode and decode unchanged", "[format]") {
  RankTrace t = sample_trace();
  auto bytes = encode(t);
  RankTrace back = decode_rank_trace(bytes, "mem");
  REQUIRE(back == t);
  EventCursor c(back.streams[0], 1);
  Event ev;
  int n = 0;
  while (c.next(ev)) {
    REQUIRE(ev.kind == Kind::pwrite);
    REQUIRE(io_args(ev).offset() == 4096 * n);
    REQUIRE(ev.start_ns == 100 + 100 * n);
    REQUIRE(ev.dur_ns == 40);
    ++n;
  }
  REQUIRE(n == 50);
}

TEST_CASE("a communicator table encoded as it grows gives the same trace", "[format][comms]") {
  RankTrace t = sample_trace();
  for (int32_t id = 2; id < 300; ++id)
    t.comms.push_back({id, id % 3 ? CommOrigin::dup : CommOrigin::split, id / 2, uint64_t(id) * 7, -id, id % 5,
                       std::vector<int32_t>(size_t(id % 6), id)});
  RankTrace bare = t;
  bare.comms.clear();
  for (size_t frame : {size_t(256) << 10, size_t(100)}) {  // the table in one piece; in compressed frames
    EncodedComms enc;
    enc.frame_bytes = frame;
    // Four flushes, each appending what was made since the one before.
    for (size_t upto : {size_t(2), size_t(150), size_t(151), t.comms.size()}) {
      for (size_t i = enc.count; i < upto; ++i) enc.append(t.comms[i]);
      RankTrace part = t;
      part.comms.resize(upto);
      std::vector<uint8_t> bytes = encode(bare, enc);
      REQUIRE(decode_rank_trace(bytes, "mem") == part);
      if (frame > enc.bytes.size()) REQUIRE(bytes == encode(part));  // one frame: the same file
    }
    REQUIRE(enc.count == t.comms.size());
    REQUIRE(enc.framed == enc.bytes.size() / frame * frame);
    REQUIRE(decode_rank_trace(encode(bare, enc), "mem") == t);
  }
  // The encoded table is used instead of the trace's own.
  EncodedComms none;
  REQUIRE(decode_rank_trace(encode(t, none), "mem").comms.empty());
}

TEST_CASE("jobs and plans round-trip", "[format]") {
  JobInfo j;
  j.job_id = 42;
  j.size = 3;
  j.state = JobState::complete;
  j.ranks_written = {0, 1, 2};
  j.mpi_library = "Open MPI v4.1.4, package: Debian OpenMPI";
  j.mpi_io = "ompio";
  j.ompio_fcoll = "dynamic_gen2";
  j.mpiio_hints = {{"/data/out", {{"cb_buffer_size", "1048576", true}, {"cb_nodes", "2", false}}}, {"/data/in", {}}};
  j.mpiio_hint_sets_dropped = 3;
  REQUIRE(decode_job(encode(j), "job") == j);
  Plan p;
  p.job = j;
  p.ranks.resize(3);
  p.ranks[1].files = {0, 1, 2, 5};
  p.ranks[2].cpu_wait_ns = 98765;
  p.ranks[0].placement = {4, 64};
  p.ranks[2].placement = {64, 64};
  p.files = {{"/a", true, false, false, 0}, {"/b", false, true, false, 4096}};
  p.comms = {{{0, 1, 2}, CommOrigin::world}, {{1, 2}, CommOrigin::split}, {{2}, CommOrigin::self}};
  p.streams = sample_trace().streams;
  REQUIRE(decode_plan(encode(p), "plan") == p);
}

// A container as format.hpp describes it, uncompressed, around `body`.
std::vector<uint8_t> container_of(const char* magic, uint32_t version, Encoder& body) {
  Encoder e;
  e.raw({reinterpret_cast<const uint8_t*>(magic), 8});
  e.fixed32(version);
  e.u8(0);
  e.fixed64(body.bytes().size());
  e.fixed64(body.bytes().size());
  e.raw(body.bytes());
  e.fixed32(crc32c(e.bytes()));
  e.raw({reinterpret_cast<const uint8_t*>("MPIOREND"), 8});
  return std::move(e.bytes());
}

// Format 9 wrote no MPI-IO hints: its job files read with none.
TEST_CASE("job files of format 9 still read", "[format]") {
  JobInfo j;
  j.job_id = 9;
  j.size = 2;
  j.mpi_library = "MPICH Version: 4.0.2";
  j.mpi_io = "romio";
  j.trace_files = {{"ranks.mpior", {0, 1}}};
  Encoder job;
  job.fixed32(kinds_fingerprint());
  body::Put io(job, 9);
  body::job_file(io, j);
  REQUIRE(decode_job(container_of("MPIORJOB", 9, job), "job.mpior") == j);
  j.ompio_fcoll = "vulcan";  // a field of 10: not in a file of 9
  Encoder later;
  later.fixed32(kinds_fingerprint());
  body::Put io10(later, 10);
  body::job_file(io10, j);
  REQUIRE(job.bytes() != later.bytes());
  REQUIRE_THAT(
      [&] {
        try {
          decode_job(container_of("MPIORJOB", 8, job), "job.mpior");
        } catch (const FormatError& e) {
          return std::string(e.what());
        }
        return std::string("accepted");
      }(),
      Catch::Contains("format version 8 (written by an older mpior)"));
}

TEST_CASE("the reader rejects damaged files with a message naming them", "[format]") {
  auto bytes = encode(sample_trace());
  auto message = [](std::vector<uint8_t> b) {
    try {
      decode_rank_trace(b, "traces/rank-000001.mpior");
    } catch (const FormatError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  SECTION("truncation at every length") {
    for (size_t n = 0; n < bytes.size(); n += 7) {
      std::string m = message({bytes.begin(), bytes.begin() + long(n)});
      REQUIRE(m.find("traces/rank-000001.mpior") == 0);
    }
  }
  SECTION("a flipped byte anywhere") {
    for (size_t i = 0; i < bytes.size(); ++i) {
      auto b = bytes;
      b[i] ^= 0x10;
      REQUIRE(message(b) != "accepted");
    }
  }
  SECTION("wrong magic") {
    auto b = bytes;
    b[0] = 'X';
    REQUIRE_THAT(message(b), Catch::Contains("bad magic"));
  }
  SECTION("a job file where a rank trace is expected") {
    JobInfo j;
    REQUIRE_THAT(message(encode(j)), Catch::Contains("is an mpior job file"));
  }
  SECTION("a future version") {
    auto b = bytes;
    b[8] = uint8_t(kFormatVersion + 1);
    REQUIRE_THAT(message(b), Catch::Contains("newer mpior"));
  }
}

TEST_CASE("rank file names", "[format]") {
  REQUIRE(rank_file_name(42) == "rank-000042.mpior");
  REQUIRE(rank_from_file_name("rank-000042.mpior") == 42);
  REQUIRE(rank_from_file_name("rank-000042.mpior.tmp.5") == -1);
  REQUIRE(rank_from_file_name("job.mpior") == -1);
}

// A fuzzed merged file's rank list, a loop whose body lay outside it, made
// mpior-post expand ranks until memory ran out (30 s, then a message).
TEST_CASE("a stream's rank list is checked before it is expanded", "[format]") {
  Plan p;
  p.job.job_id = 7;
  p.job.size = 3;
  p.ranks.resize(3);
  p.streams = sample_trace().streams;
  Stream& s = p.streams.at(0);
  auto& items = s.values.items();
  auto message = [&] {
    try {
      decode_plan(encode(p), "plan");
    } catch (const FormatError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  REQUIRE(message() == "accepted");
  SECTION("a loop whose body runs past the list") {
    s.ranks = {uint32_t(items.size()), 1};
    items.push_back({1, 1000000000, 5});
    REQUIRE_THAT(message(), Catch::Contains("rank list is malformed"));
  }
  SECTION("more ranks than the file holds") {
    s.ranks = {uint32_t(items.size()), 2};
    items.push_back({1, 1000000, 1});
    items.push_back({0, 0, 0});
    REQUIRE_THAT(message(), Catch::Contains("stands for 1000000 ranks, the file holds 3"));
  }
  SECTION("a count past 2^64 saturates instead of wrapping") {
    s.ranks = {uint32_t(items.size()), 5};
    for (int i = 0; i < 4; ++i) items.push_back({0, 0xFFFFFFFFu, uint32_t(4 - i)});
    items.push_back({0, 0, 0});
    REQUIRE_THAT(message(), Catch::Contains("the file holds 3"));
  }
}
