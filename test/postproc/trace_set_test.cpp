#include "postproc/trace_set.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <set>

#include "test/postproc/fixture.hpp"
#include "trace/cursor.hpp"
#include "trace/format.hpp"
#include "trace/tool_error.hpp"

using namespace mpior;
using namespace mpior::test;
using Catch::Matchers::Contains;

namespace {

std::vector<trace::RankTrace> three_ranks() {
  std::vector<trace::RankTrace> out;
  for (int32_t r = 0; r < 3; ++r) {
    RankBuilder b(r, 3);
    b.collective(trace::Kind::MPI_Barrier, 0);
    out.push_back(b.finish());
  }
  return out;
}

}  // namespace

TEST_CASE("a complete trace directory is read in rank order", "[postproc][completeness]") {
  TempDir tmp;
  auto ranks = three_ranks();
  write_trace_dir(tmp.path(), complete_job(3), ranks);
  auto set = postproc::read_trace_dir(tmp.path());
  REQUIRE(set.size() == 3);
  for (int32_t r = 0; r < 3; ++r) {
    REQUIRE(set.ranks[size_t(r)] == ranks[size_t(r)]);
    REQUIRE(set.path(r) == tmp / trace::rank_file_name(r));
  }
  REQUIRE(set.warnings.empty());
}

TEST_CASE("incomplete or mixed trace directories are rejected naming the file", "[postproc][completeness]") {
  TempDir tmp;
  auto ranks = three_ranks();
  trace::JobInfo job = complete_job(3);
  SECTION("missing rank") {
    write_trace_dir(tmp.path(), job, {ranks[0], ranks[2]});
    REQUIRE_THROWS_AS(postproc::read_trace_dir(tmp.path()), ToolError);
    REQUIRE_THROWS_WITH(postproc::read_trace_dir(tmp.path()),
                        Contains("1 of 3 rank files missing") && Contains(tmp / "rank-000001.mpior"));
  }
  SECTION("rank file of another job") {
    ranks[2].process.job_id = 0x999;
    write_trace_dir(tmp.path(), job, ranks);
    REQUIRE_THROWS_WITH(postproc::read_trace_dir(tmp.path()),
                        Contains(tmp / "rank-000002.mpior") && Contains("job 0x999") && Contains("another run"));
  }
  SECTION("job still running: read, not complete") {
    job.state = trace::JobState::running;
    write_trace_dir(tmp.path(), job, ranks);
    auto set = postproc::read_trace_dir(tmp.path());
    REQUIRE(set.size() == 3);
    REQUIRE_FALSE(postproc::complete(set));
  }
  SECTION("corrupt rank file") {
    write_trace_dir(tmp.path(), job, ranks);
    std::string path = tmp / "rank-000001.mpior";
    auto bytes = trace::read_file(path);
    bytes[bytes.size() / 2] ^= 0x5a;
    trace::write_file_atomic(path, bytes);
    REQUIRE_THROWS_AS(postproc::read_trace_dir(tmp.path()), trace::FormatError);
    REQUIRE_THROWS_WITH(postproc::read_trace_dir(tmp.path()), Contains(path));
  }
  SECTION("truncated rank file") {
    write_trace_dir(tmp.path(), job, ranks);
    std::string path = tmp / "rank-000000.mpior";
    auto bytes = trace::read_file(path);
    bytes.resize(bytes.size() - 9);
    trace::write_file_atomic(path, bytes);
    REQUIRE_THROWS_WITH(postproc::read_trace_dir(tmp.path()), Contains(path) && Contains("truncated"));
  }
  SECTION("rank file under another rank's name") {
    write_trace_dir(tmp.path(), job, ranks);
    trace::write_file_atomic(tmp / "rank-000001.mpior", trace::encode(ranks[2]));
    REQUIRE_THROWS_WITH(postproc::read_trace_dir(tmp.path()),
                        Contains(tmp / "rank-000001.mpior") && Contains("holds rank 2"));
  }
  SECTION("rank file beyond the job's size") {
    write_trace_dir(tmp.path(), job, ranks);
    trace::write_file_atomic(tmp / "rank-000003.mpior", trace::encode(ranks[0]));
    REQUIRE_THROWS_WITH(postproc::read_trace_dir(tmp.path()),
                        Contains(tmp / "rank-000003.mpior") && Contains("has 3 ranks"));
  }
  SECTION("no job file") {
    write_trace_dir(tmp.path(), job, ranks);
    std::filesystem::remove(tmp / "job.mpior");
    REQUIRE_THROWS_WITH(postproc::read_trace_dir(tmp.path()), Contains(tmp / "job.mpior") && Contains("missing"));
  }
  SECTION("not a directory") {
    REQUIRE_THROWS_WITH(postproc::read_trace_dir(tmp / "nowhere"),
                        Contains(tmp / "nowhere") && Contains("not a directory"));
  }
}

TEST_CASE("a rank that did not finish is a warning", "[postproc][completeness]") {
  auto ranks = three_ranks();
  ranks[1].process.finished = false;
  auto set = make_set(ranks);
  REQUIRE(set.warnings.size() == 1);
  REQUIRE_THAT(set.warnings[0], Contains("<memory rank 1>") && Contains("incomplete") && Contains("ended without") &&
                                    Contains("replay stops there"));
  REQUIRE_FALSE(postproc::complete(set));
}

namespace {

// A process rank 0 started: `files` written in turn from `start_ns`, one per
// thread, under pid `pid`.
trace::RankTrace child_part(int64_t pid, int64_t start_ns, std::initializer_list<const char*> files) {
  RankBuilder b(0, 1);
  uint32_t thread = 0;
  for (const char* path : files) {
    b.thread(thread++);
    b.at(start_ns);
    b.pwrite(b.file(path), 3, 0, 10, 10);
    start_ns += 5000;
  }
  trace::RankTrace t = b.finish();
  t.process.pid = pid;
  t.process.mpi = false;
  return t;
}

// The paths a stream writes, in order.
std::vector<std::string> written(const trace::RankTrace& t, const trace::Stream& s) {
  std::vector<std::string> out;
  trace::EventCursor c(s, t.process.rank, {});
  trace::Event ev;
  while (c.next(ev))
    if (ev.kind == trace::Kind::pwrite) out.push_back(t.files[size_t(ev.args[trace::arg::file])].path);
  return out;
}

}  // namespace

TEST_CASE("an exec'd program continues the thread that called exec", "[postproc][children]") {
  TempDir tmp;
  RankBuilder rank(0, 1);
  rank.pwrite(rank.file("/rank"), 3, 0, 10, 10);
  write_trace_dir(tmp.path(), complete_job(1), {rank.finish()});
  // pid 77 writes /before on two threads, then execs a program with two
  // threads; pid 78 is another child. Serials make the exec'd part's file
  // name sort first: order comes from the events.
  auto write_child = [&](const trace::RankTrace& t, uint64_t serial) {
    trace::write_file_atomic(tmp / trace::child_file_name(0, t.process.pid, serial), trace::encode(t));
  };
  write_child(child_part(77, 20000, {"/before-main", "/before-exec"}), 0xff);
  write_child(child_part(77, 40000, {"/after-main", "/after-thread"}), 0x01);
  write_child(child_part(78, 30000, {"/other"}), 0x02);
  auto set = postproc::read_trace_dir(tmp.path());
  REQUIRE(set.children == 3);
  const trace::RankTrace& t = set.ranks[0];
  REQUIRE(t.streams.size() == 5);  // the rank's, pid 77's 2 + 1 exec'd, pid 78's
  std::vector<std::vector<std::string>> threads;
  std::set<uint32_t> ids;
  for (const trace::Stream& s : t.streams) threads.push_back(written(t, s)), ids.insert(s.thread);
  REQUIRE(ids.size() == 5);
  using V = std::vector<std::string>;
  REQUIRE(threads == std::vector<V>{V{"/rank"}, V{"/before-main"}, V{"/before-exec", "/after-main"}, V{"/after-thread"},
                                    V{"/other"}});
}
