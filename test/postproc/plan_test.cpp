#include "postproc/plan.hpp"

#include <fcntl.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>

#include "postproc/analyze.hpp"
#include "postproc/dump.hpp"
#include "postproc/post.hpp"
#include "test/postproc/fixture.hpp"
#include "trace/format.hpp"
#include "trace/tool_error.hpp"

using namespace mpior;
using namespace mpior::test;
using Catch::Matchers::Contains;
using trace::Kind;
namespace arg = trace::arg;

namespace {

// N-to-N files plus one shared file; rank 0 renames a temporary file; rank 1
// has a second thread; ranks 1 and 2 share a split communicator.
std::vector<trace::RankTrace> n_to_n(int32_t size) {
  std::vector<trace::RankTrace> out;
  for (int32_t r = 0; r < size; ++r) {
    RankBuilder b(r, size);
    int32_t own = b.file("/out/file_" + std::to_string(r));
    int32_t shared = b.file("/out/shared");
    b.open(own, 3, O_CREAT | O_WRONLY, 3);
    for (int i = 0; i < 4; ++i) b.pwrite(own, 3, 1024 * i, 1024, 1024);
    b.open(shared, 4, O_RDONLY, 4);
    b.pread(shared, 4, 4096 * r, 4096, 4096);
    if (r == 0) {
      int32_t tmp = b.file("/out/tmp"), fin = b.file("/out/final");
      b.call(Kind::rename, {{arg::file, tmp}, {arg::file2, fin}});
    }
    if (r >= 1) b.comm(trace::CommOrigin::split, 0, 1, {1, 2});
    b.collective(Kind::MPI_Barrier, 0);
    b.create(Kind::MPI_Comm_split, 0, r >= 1 ? 2 : -1);
    if (r == 1) {
      b.thread(1);
      b.send(2, 1, 5);
    }
    if (r == 2) b.recv(2, 0, 5, 0, 5);
    out.push_back(b.finish());
  }
  return out;
}

// The plan files of two ranks' traces, by rank-local file id.
class PlanFiles {
 public:
  PlanFiles(RankBuilder& r0, RankBuilder& r1) {
    std::vector<trace::RankTrace> ranks;
    ranks.push_back(r0.finish());
    ranks.push_back(r1.finish());
    a_ = postproc::analyze(make_set(ranks));
  }
  const trace::PlanFile& of(int32_t rank, int32_t local) const {
    return a_.files.files[size_t(a_.files.local_to_global[size_t(rank)][size_t(local)])];
  }

 private:
  postproc::Analysis a_;
};

}  // namespace

TEST_CASE("files are numbered by first appearance, rank by rank", "[postproc][plan]") {
  auto set = make_set(n_to_n(3));
  auto a = postproc::analyze(set);
  const auto& f = a.files.files;
  std::vector<std::string> paths;
  for (const auto& p : f) paths.push_back(p.path);
  REQUIRE(paths == std::vector<std::string>{"<stdin>", "<stdout>", "<stderr>", "/out/file_0", "/out/shared", "/out/tmp",
                                            "/out/final", "/out/file_1", "/out/file_2"});
  REQUIRE(a.files.local_to_global[1] == std::vector<int32_t>{0, 1, 2, 7, 4});
  REQUIRE(a.files.local_to_global[2] == std::vector<int32_t>{0, 1, 2, 8, 4});
  REQUIRE(f[3].created);
  REQUIRE_FALSE(f[4].created);
  REQUIRE(f[4].initial_size == 3 * 4096);  // rank 2 reads [8192, 12288)
  REQUIRE_FALSE(f[5].created);
  REQUIRE(f[6].created);  // rename target
}

TEST_CASE("a file made new (O_EXCL) needs no bytes before the run, whoever reads it after", "[postproc][plan]") {
  // cp a b && gzip b, folded in as two threads: cp creates b exclusively and
  // writes it, gzip (later) reads it whole. Another file created without
  // O_EXCL and read by the other thread keeps the reads' bound: it may have
  // been there before.
  RankBuilder b(0, 1);
  int32_t made = b.file("/out/b"), maybe = b.file("/out/c");
  b.thread(1);
  b.at(1'000'000);
  b.open(made, 3, O_CREAT | O_EXCL | O_WRONLY, 3);
  b.pwrite(made, 3, 0, 4096, 4096);
  b.open(maybe, 4, O_CREAT | O_WRONLY, 4);
  b.pwrite(maybe, 4, 0, 4096, 4096);
  b.thread(2);
  b.at(5'000'000);
  b.open(made, 3, O_RDONLY, 3);
  b.pread(made, 3, 0, 4096, 4096);
  b.open(maybe, 4, O_RDONLY, 4);
  b.pread(maybe, 4, 0, 4096, 4096);
  std::vector<trace::RankTrace> ranks;
  ranks.push_back(b.finish());
  auto set = make_set(std::move(ranks));
  auto a = postproc::analyze(set);
  const trace::PlanFile& f = a.files.files[size_t(a.files.local_to_global[0][size_t(made)])];
  REQUIRE(f.created);
  REQUIRE_FALSE(f.existed);
  REQUIRE(f.initial_size == 0);
  REQUIRE(a.files.files[size_t(a.files.local_to_global[0][size_t(maybe)])].initial_size == 4096);
}

TEST_CASE("a file a rank found before it made it existed, even if the run made it again", "[postproc][plan]") {
  // Rank 0: a restart file read, then overwritten; rm -f old.gz; gzip old
  // (found, then made exclusively); a directory made. Rank 1 stats a file
  // rank 0 makes much later, reads one rank 0 made, finds the directory and
  // an input no rank makes. Across ranks the order is not known (clocks
  // drift on a loaded node): only a rank's own find before its own make, or
  // a find of what no rank made, says the file was there.
  RankBuilder r0(0, 2), r1(1, 2);
  int32_t gz = r0.file("/out/old.gz"), late = r0.file("/out/late"), made0 = r0.file("/out/made");
  int32_t dir0 = r0.file("/out/d"), restart = r0.file("/out/restart");
  r0.at(500'000);
  r0.open(restart, 6, O_RDONLY, 6);
  r0.pread(restart, 6, 0, 4096, 4096);
  r0.open(restart, 7, O_CREAT | O_TRUNC | O_WRONLY, 7);
  r0.at(1'000'000);
  r0.call(Kind::unlink, {{trace::arg::file, gz}, {trace::arg::flags, 0}});
  r0.at(3'000'000);
  r0.open(gz, 3, O_CREAT | O_EXCL | O_WRONLY, 3);
  r0.open(made0, 4, O_CREAT | O_WRONLY, 4);
  r0.call(Kind::mkdir, {{trace::arg::file, dir0}, {trace::arg::mode, 0755}});
  r0.at(50'000'000);
  r0.open(late, 5, O_CREAT | O_WRONLY, 5);
  int32_t late1 = r1.file("/out/late"), made1 = r1.file("/out/made"), dir1 = r1.file("/out/d");
  int32_t input = r1.file("/in/mesh");
  r1.at(2'000'000);
  r1.call(Kind::stat, {{trace::arg::file, late1}});
  r1.at(9'000'000);
  r1.open(made1, 3, O_RDONLY, 3);
  r1.call(Kind::stat, {{trace::arg::file, dir1}});
  r1.open(input, 4, O_RDONLY, 4);
  PlanFiles files(r0, r1);
  auto file_of = [&](int32_t rank, int32_t local) { return files.of(rank, local); };
  CHECK((file_of(0, gz).created && file_of(0, gz).existed));
  CHECK((file_of(0, restart).existed && file_of(0, restart).created));  // made before the replay
  CHECK(file_of(0, restart).initial_size == 4096);                      // with what was read before
  CHECK((file_of(0, late).created && !file_of(0, late).existed));       // found by another rank: no known order
  CHECK((file_of(0, made0).created && !file_of(0, made0).existed));
  CHECK((file_of(0, dir0).created && !file_of(0, dir0).existed));
  CHECK((!file_of(1, input).created && file_of(1, input).existed));
}

TEST_CASE("a file truncated keeps what reads before the truncation found there", "[postproc][plan]") {
  // A restart file: each rank reads its half, long before rank 0 overwrites
  // it. An input rank 1 reads 5 ms before rank 0 truncates it: clocks that
  // close are in no known order. An output an earlier run left, made again
  // by rank 0 and read back by both: no rank found it before it was made.
  trace::BuilderOptions exact;
  exact.lossless = true;
  RankBuilder r0(0, 2, exact), r1(1, 2, exact);
  int32_t restart0 = r0.file("/out/restart"), out0 = r0.file("/out/old_output"), late0 = r0.file("/in/late");
  int32_t restart1 = r1.file("/out/restart"), out1 = r1.file("/out/old_output"), late1 = r1.file("/in/late");
  r0.at(1'000'000);
  r0.open(restart0, 3, O_RDONLY, 3);
  r0.pread(restart0, 3, 0, 4096, 4096);
  r0.open(out0, 4, O_CREAT | O_TRUNC | O_RDWR, 4);
  r0.pwrite(out0, 4, 0, 65536, 65536);
  r0.pread(out0, 4, 0, 65536, 65536);
  r0.at(100'000'000);
  r0.open(late0, 6, O_TRUNC | O_WRONLY, 6);
  r0.at(200'000'000);
  r0.open(restart0, 5, O_CREAT | O_TRUNC | O_WRONLY, 5);
  r0.pwrite(restart0, 5, 0, 8192, 8192);
  r1.at(1'000'000);
  r1.open(restart1, 3, O_RDONLY, 3);
  r1.pread(restart1, 3, 4096, 4096, 4096);
  r1.at(2'000'000);
  r1.open(out1, 4, O_RDONLY, 4);
  r1.pread(out1, 4, 0, 65536, 65536);
  r1.at(95'000'000);
  r1.open(late1, 5, O_RDONLY, 5);
  r1.pread(late1, 5, 0, 16384, 16384);
  PlanFiles files(r0, r1);
  auto file_of = [&](int32_t rank, int32_t local) { return files.of(rank, local); };
  CHECK(file_of(0, restart0).existed);
  CHECK(file_of(0, restart0).initial_size == 8192);  // both halves: the replay's reads find them
  CHECK((file_of(0, late0).existed && file_of(0, late0).initial_size == 0));
  CHECK((!file_of(0, out0).existed && file_of(0, out0).initial_size == 0));
}

TEST_CASE("a read before a barrier the truncating rank left came before the truncation", "[postproc][plan]") {
  // restart.c on a loaded node: rank 1 reads its half, both meet at a
  // barrier, rank 0 computes and overwrites the file. Its clock, which
  // leaves out the time it waited for a CPU, puts the truncation 5 ms after
  // rank 1's read: too close for the clocks, ordered by the barrier. The
  // same read after rank 1's next barrier, which rank 0 had not left, shows
  // nothing.
  trace::BuilderOptions exact;
  exact.lossless = true;
  for (bool met : {true, false}) {
    RankBuilder r0(0, 2, exact), r1(1, 2, exact);
    int32_t f0 = r0.file("/out/restart"), f1 = r1.file("/out/restart");
    r0.at(1'000'000);
    r0.open(f0, 3, O_RDONLY, 3);
    r0.pread(f0, 3, 0, 4096, 4096);
    r0.call(trace::Kind::MPI_Barrier, {{trace::arg::comm, 0}, {trace::arg::coll_seq, 0}});
    r0.at(6'000'000);
    r0.open(f0, 5, O_TRUNC | O_WRONLY, 5);
    r0.pwrite(f0, 5, 0, 8192, 8192);
    r0.call(trace::Kind::MPI_Barrier, {{trace::arg::comm, 0}, {trace::arg::coll_seq, 1}});
    r1.at(1'000'000);
    if (!met) r1.call(trace::Kind::MPI_Barrier, {{trace::arg::comm, 0}, {trace::arg::coll_seq, 0}});
    r1.open(f1, 3, O_RDONLY, 3);
    r1.pread(f1, 3, 4096, 4096, 4096);
    r1.call(trace::Kind::MPI_Barrier, {{trace::arg::comm, 0}, {trace::arg::coll_seq, met ? 0 : 1}});
    if (met) r1.call(trace::Kind::MPI_Barrier, {{trace::arg::comm, 0}, {trace::arg::coll_seq, 1}});
    PlanFiles files(r0, r1);
    CAPTURE(met);
    CHECK(files.of(0, f0).initial_size == (met ? 8192 : 4096));
  }
}

TEST_CASE("the written plan decodes and equals the plan built", "[postproc][plan]") {
  TempDir tmp;
  auto ranks = n_to_n(3);
  write_trace_dir(tmp / "traces", complete_job(3), ranks);
  std::ostringstream log, warn;
  postproc::post_process(tmp / "traces", tmp / "deep/plan", log, warn);
  REQUIRE_THAT(log.str(), Contains("3 ranks, 4 streams, 9 files"));
  REQUIRE(warn.str().empty());
  trace::Plan written = trace::read_plan(tmp / "deep/plan/plan.mpior");
  auto set = postproc::read_trace_dir(tmp / "traces");
  auto a = postproc::analyze(set);
  trace::Plan built = postproc::build_plan(set, a);
  REQUIRE(written == built);

  REQUIRE(written.job == complete_job(3));
  REQUIRE(written.ranks.size() == 3);
  REQUIRE(written.ranks[1].files == a.files.local_to_global[1]);
  REQUIRE(written.ranks[2].comms == a.comms.local_to_global[2]);
  REQUIRE(written.ranks[0].traced_ns == ranks[0].process.end_ns);
  REQUIRE(written.ranks[1].host == ranks[1].process.host);
  int32_t split = written.ranks[1].comms[2];
  REQUIRE(written.ranks[2].comms[2] == split);
  REQUIRE(written.comms[size_t(split)].members == std::vector<int32_t>{1, 2});
  REQUIRE(written.comms[0].members == std::vector<int32_t>{0, 1, 2});
  // the ranks' streams, unchanged, each for its one rank
  REQUIRE(written.streams.size() == 4);
  REQUIRE(written.streams[0] == ranks[0].streams[0]);
  REQUIRE(written.streams[2] == ranks[1].streams[1]);
  REQUIRE(written.streams[2].thread == 1);
  REQUIRE(written.streams[2].rank_list() == std::vector<int64_t>{1});
  REQUIRE(written.streams[3].rank_list() == std::vector<int64_t>{2});
  REQUIRE(std::filesystem::exists(tmp / "deep/plan/summary.txt"));
  REQUIRE(std::filesystem::exists(tmp / "deep/plan/summary.json"));
}

TEST_CASE("an unwritable plan directory is a clear error and writes nothing", "[postproc][plan]") {
  TempDir tmp;
  write_trace_dir(tmp / "traces", complete_job(3), n_to_n(3));
  trace::write_file_atomic(tmp / "blocker", std::vector<uint8_t>{'x'});
  std::ostringstream log, warn;
  REQUIRE_THROWS_WITH(postproc::post_process(tmp / "traces", tmp / "blocker/plan", log, warn),
                      Contains(tmp / "blocker/plan") && Contains("cannot create the plan directory"));
  REQUIRE(log.str().empty());
}

TEST_CASE("a failed analysis leaves an earlier plan directory alone", "[postproc][plan]") {
  TempDir tmp;
  auto ranks = n_to_n(3);
  write_trace_dir(tmp / "traces", complete_job(3), ranks);
  std::ostringstream log, warn;
  postproc::post_process(tmp / "traces", tmp / "plan", log, warn);
  auto before = trace::read_file(tmp / "plan/plan.mpior");
  ranks[2].process.job_id = 1;
  write_trace_dir(tmp / "traces", complete_job(3), ranks);
  REQUIRE_THROWS_AS(postproc::post_process(tmp / "traces", tmp / "plan", log, warn), ToolError);
  REQUIRE(trace::read_file(tmp / "plan/plan.mpior") == before);
}

TEST_CASE("--dump prints any mpior file with its tables and loops", "[postproc][dump]") {
  TempDir tmp;
  auto ranks = n_to_n(3);
  write_trace_dir(tmp / "traces", complete_job(3), ranks);
  std::ostringstream log, warn;
  postproc::post_process(tmp / "traces", tmp / "plan", log, warn);
  std::ostringstream rank, job, plan;
  postproc::dump_file(tmp / "traces/rank-000001.mpior", rank);
  REQUIRE_THAT(rank.str(), Contains("mpior rank trace, format version " + std::to_string(trace::kFormatVersion)) &&
                               Contains("rank 1 of 3") && Contains("/out/file_1") &&
                               Contains("MPI_Comm_split of 0 after 1 collectives") && Contains("stream thread 1") &&
                               Contains("MPI_Send comm=2"));
  postproc::dump_file(tmp / "traces/job.mpior", job);
  REQUIRE_THAT(job.str(), Contains("mpior job file") && Contains("job 0x5eed: 3 ranks, state complete"));
  postproc::dump_file(tmp / "plan/plan.mpior", plan);
  REQUIRE_THAT(plan.str(), Contains("mpior plan") && Contains("/out/final  created") &&
                               Contains("files [0, 1, 2, 8, 4]") && Contains("members [1, 2]") &&
                               Contains("pwrite fd=3"));
  trace::write_file_atomic(tmp / "junk", std::vector<uint8_t>(64, 'j'));
  std::ostringstream junk;
  REQUIRE_THROWS_WITH(postproc::dump_file(tmp / "junk", junk), Contains(tmp / "junk") && Contains("not an mpior file"));
  REQUIRE(junk.str().empty());
}
