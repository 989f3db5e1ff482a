// Sizes that follow the data, and the MPI library's own calls moving
// between ranks: what a molecular-dynamics code (a ring exchange of the
// atoms that crossed, a dump gathered to rank 0) shows at every rank count.
#include <fcntl.h>

#include <catch2/catch.hpp>

#include "extrap/extrapolate.hpp"
#include "test/extrap/input_of.hpp"
#include "trace/cursor.hpp"
#include "trace/tool_error.hpp"

using namespace mpior;
using Catch::Matchers::Contains;

namespace {

// How many bytes of atoms rank k holds beyond its even share: no model of
// (k, n) fits it.
int64_t scatter(int64_t k, int64_t n) { return (k * 7919 + n * 104729) % 1000; }

constexpr int64_t kDumpBytes = 90000;

// Each rank sends the atoms that crossed to the next rank of a ring; rank 0
// gathers every other rank's atoms and writes them to a dump with fwrite.
// `read_back`: rank 0 then reads the dump again (its sizes decide a read).
// `racy_mkdir`: inside MPI_Init one rank (which one depends on the run)
// creates the MPI library's session directory.
extrap::Input slab_run(int32_t n, bool read_back = false, bool racy_mkdir = false) {
  std::vector<trace::RankTrace> ranks;
  for (int32_t r = 0; r < n; ++r) {
    test::RankBuilder b(r, n);
    int32_t dump = b.file("/data/dump.txt", O_WRONLY | O_CREAT);
    int32_t session = b.file("/tmp/mpi-session");
    b.site(0x1f);
    b.call(trace::Kind::MPI_Init, {}, 0, 5000);
    if (racy_mkdir && r == n % 2) {
      b.site(0x1e);
      b.call(trace::Kind::mkdir, {{trace::arg::file, session}, {trace::arg::mode, 0700}}, 0, 1000, 1);
    }
    b.site(0x20);
    b.send(0, (r + 1) % n, 0, 8000 + scatter(r, n));
    b.site(0x21);
    b.recv(0, (r + n - 1) % n, 0, (r + n - 1) % n, 0);
    if (r != 0) {
      b.site(0x25);
      b.send(0, 0, 1, kDumpBytes / n + scatter(r, n));
      ranks.push_back(b.finish());
      continue;
    }
    b.site(0x22);
    b.call(trace::Kind::fopen, {{trace::arg::handle, 5}, {trace::arg::file, dump}, {trace::arg::flags, 577}}, 1);
    int64_t offset = 0;
    for (int32_t k = 1; k < n; ++k) {
      int64_t len = kDumpBytes / n + scatter(k, n);
      b.site(0x23);
      b.recv(0, k, 1, k, 1);
      b.site(0x24);
      b.call(
          trace::Kind::fwrite,
          {{trace::arg::handle, 5}, {trace::arg::file, dump}, {trace::arg::offset, offset}, {trace::arg::count, len}},
          len);
      offset += len;
    }
    if (read_back) {
      b.site(0x26);
      b.call(trace::Kind::fread,
             {{trace::arg::handle, 5}, {trace::arg::file, dump}, {trace::arg::offset, 0}, {trace::arg::count, offset}},
             offset);
    }
    ranks.push_back(b.finish());
  }
  return test::input_of(std::move(ranks), "./md", "t" + std::to_string(n));
}

std::vector<extrap::Input> slab_runs(bool read_back = false, bool racy_mkdir = false) {
  return {slab_run(4, read_back, racy_mkdir), slab_run(5, read_back, racy_mkdir), slab_run(6, read_back, racy_mkdir)};
}

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& w : lines) all += w + "\n";
  return all;
}

}  // namespace

TEST_CASE("message sizes and a dump's chunks that follow the data take a best fit") {
  std::vector<std::string> warnings;
  trace::Plan p = extrap::extrapolate(slab_runs(), 8, {}, &warnings);
  std::string all = joined(warnings);
  INFO(all);
  CHECK_THAT(all, Contains("bytes a stdio stream writes to a file the job never reads"));
  CHECK_THAT(all, Contains("sending or receiving messages whose sizes follow the data approximated"));
  std::vector<int64_t> chunks;
  for (const trace::Stream& s : p.streams) {
    if (!trace::seq_contains(s.view(s.ranks), 0)) continue;
    trace::EventCursor c(s, 0);
    trace::Event ev;
    while (c.next(ev))
      if (ev.kind == trace::Kind::fwrite) chunks.push_back(ev.ret);
  }
  // Seven chunks about an eighth of the dump each (the share plus the mean scatter).
  REQUIRE(chunks.size() == 7);
  for (int64_t len : chunks) CHECK((len >= kDumpBytes / 8 && len <= kDumpBytes / 8 + 1000));
}

TEST_CASE("a dump the job reads back keeps its sizes structure; --strict refuses data sizes") {
  REQUIRE_THROWS_WITH(extrap::extrapolate(slab_runs(true), 8), Contains("fwrite") && Contains("structure"));
  extrap::Options strict;
  strict.strict = true;
  REQUIRE_THROWS_AS(extrap::extrapolate(slab_runs(), 8, strict), ToolError);
}

TEST_CASE("the MPI library's own calls moving from rank to rank leave every input") {
  std::vector<std::string> warnings;
  trace::Plan p = extrap::extrapolate(slab_runs(false, true), 8, {}, &warnings);
  CHECK_THAT(joined(warnings), Contains("the MPI library's own I/O inside MPI_Init and MPI_Finalize differs"));
  for (const trace::Stream& s : p.streams)
    for (const trace::Leaf& l : s.leaves) CHECK(l.kind != trace::Kind::mkdir);
}
