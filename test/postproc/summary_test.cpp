#include <fcntl.h>

#include <catch2/catch.hpp>

#include "postproc/analyze.hpp"
#include "postproc/summary_files.hpp"
#include "postproc/summary_writer.hpp"
#include "test/postproc/fixture.hpp"

using namespace mpior;
using namespace mpior::test;
using Catch::Matchers::Contains;
using trace::Kind;
namespace arg = trace::arg;

namespace {

// Every depth-0 call lasts 1000 ns after a 500 ns gap (fixture.cpp).
std::vector<trace::RankTrace> hand_built() {
  RankBuilder r0(0, 2), r1(1, 2);
  int32_t out = r0.file("/data/out", O_CREAT | O_RDWR);
  r0.open(out, 3, O_CREAT | O_RDWR, 3);
  for (int i = 0; i < 3; ++i) r0.pwrite(out, 3, 4096 * i, 4096, 4096);
  r0.call(Kind::fsync, {{arg::handle, 3}, {arg::file, out}});
  r0.call(Kind::pwrite, {{arg::handle, 3}, {arg::file, out}, {arg::offset, 0}, {arg::count, 512}}, 512, 100, 1);
  r0.pread(out, 3, 0, 100, 100);
  r0.call(Kind::fprintf, {{arg::handle, 1}, {arg::file, 1}, {arg::offset, -1}, {arg::count, -1}}, 12);
  r0.send(0, 1, 0, 64);
  r0.collective(Kind::MPI_Barrier, 0);
  r0.trace().pruned[size_t(Kind::MPI_Barrier)] = {7, 700};

  int32_t in = r1.file("/data/in", O_RDONLY);
  int32_t dir = r1.file("/data/dir");
  r1.recv(0, 0, 0, 0, 0);
  r1.collective(Kind::MPI_Barrier, 0);
  r1.pread(in, 4, 1000, 500, 500);
  r1.call(Kind::read, {{arg::handle, 4}, {arg::file, in}, {arg::offset, -1}, {arg::count, 9999}}, 9999);
  r1.call(Kind::mkdir, {{arg::file, dir}, {arg::mode, 0755}});
  return {r0.finish(), r1.finish()};
}

struct Summarised {
  postproc::TraceSet set;
  postproc::Analysis a;
};

Summarised summarise() {
  Summarised s{make_set(hand_built()), {}};
  s.a = postproc::analyze(s.set);
  return s;
}

}  // namespace

TEST_CASE("the summary counts application calls, bytes and time", "[postproc][summary]") {
  auto [set, a] = summarise();
  const auto& s = a.summary;
  auto calls = [&](Kind k) { return s.kinds[size_t(k)].calls; };
  REQUIRE(calls(Kind::pwrite) == 3);  // the nested one is the library's
  REQUIRE(calls(Kind::pread) == 2);
  REQUIRE(calls(Kind::read) == 1);
  REQUIRE(calls(Kind::MPI_Barrier) == 9);  // 2 logged + 7 pruned
  REQUIRE(calls(Kind::mpior_complete) == 0);
  REQUIRE(s.kinds[size_t(Kind::pwrite)].bytes == 3 * 4096);
  REQUIRE(s.kinds[size_t(Kind::MPI_Send)].bytes == 64);
  REQUIRE(s.mpi_logged == 4);
  REQUIRE(s.mpi_pruned == 7);
  // rank 0: 7 file calls, 2 MPI calls + 700 ns pruned, 9 calls end at 14500, traced to 15500
  REQUIRE(s.ranks[0].io_ns == 7000);
  REQUIRE(s.ranks[0].mpi_ns == 2700);
  REQUIRE(s.ranks[0].traced_ns == 15500);
  REQUIRE(s.ranks[0].compute_ns() == 5800);
  REQUIRE(s.ranks[1].io_ns == 3000);
  REQUIRE(s.ranks[1].mpi_ns == 2000);
  REQUIRE(s.ranks[1].compute_ns() == 4500);
}

TEST_CASE("files carry bytes, calls and what the replayer must prepare", "[postproc][summary]") {
  auto [set, a] = summarise();
  const auto& files = a.files.files;
  REQUIRE(files.size() == 6);
  REQUIRE(files[3].path == "/data/out");
  REQUIRE(files[3].created);
  REQUIRE(files[3].initial_size == 100);
  REQUIRE(files[4].path == "/data/in");
  REQUIRE_FALSE(files[4].created);
  REQUIRE(files[4].initial_size == 1500);  // the read at an unknown offset does not count
  REQUIRE(files[5].directory);
  REQUIRE(files[5].created);  // made by the application: the replay makes it when the app did
  const auto& t = a.summary.files;
  REQUIRE(t[3].bytes_written == 3 * 4096);
  REQUIRE(t[3].bytes_read == 100);
  REQUIRE(t[3].ops == 6);
  REQUIRE(t[4].bytes_read == 10499);
  REQUIRE(t[1].bytes_written == 12);
  REQUIRE(postproc::files_by_bytes(a) == std::vector<int32_t>{3, 4, 1, 5, 0, 2});
}

TEST_CASE("summary.json has the contract's keys and values", "[postproc][summary]") {
  auto [set, a] = summarise();
  nlohmann::json j = postproc::summary_json(set, a);
  REQUIRE(j["ranks"] == 2);
  REQUIRE(j["ops"]["pwrite"] == 3);
  REQUIRE(j["ops"]["MPI_Barrier"] == 9);
  REQUIRE(j["ops"]["fprintf"] == 1);
  REQUIRE_FALSE(j["ops"].contains("mpior_complete"));
  REQUIRE(j["files"][0]["path"] == "/data/out");
  REQUIRE(j["files"][0]["bytes_written"] == 12288);
  REQUIRE(j["files"][0]["bytes_read"] == 100);
  REQUIRE(j["files"][0]["ops"] == 6);
  REQUIRE(j["files"][1]["path"] == "/data/in");
  REQUIRE(j["mpi"]["events"] == 11);
  REQUIRE(j["mpi"]["logged"] == 4);
  REQUIRE(j["mpi"]["pruned"] == 7);
  REQUIRE(j["time"]["io_s"].get<double>() == Approx(10000e-9));
  REQUIRE(j["time"]["mpi_s"].get<double>() == Approx(4700e-9));
  REQUIRE(j["time"]["compute_s"].get<double>() == Approx(10300e-9));
  REQUIRE(j["per_rank"][1]["compute_s"].get<double>() == Approx(4500e-9));
  REQUIRE(j["messages"]["paired"] == 1);
  REQUIRE(j["collectives"]["instances"] == 1);
}

TEST_CASE("summary.txt shows times, operations and top files", "[postproc][summary]") {
  auto [set, a] = summarise();
  std::string text = postproc::summary_text(set, a);
  REQUIRE_THAT(text, Contains("job 0x5eed: 2 ranks"));
  REQUIRE_THAT(text, Contains("rank 1"));
  REQUIRE_THAT(text, Contains("pwrite") && Contains("12288"));
  REQUIRE_THAT(text, Contains("/data/out") && Contains("/data/dir/"));
  REQUIRE_THAT(text, Contains("MPI: 11 calls (4 logged, 7 pruned)"));
  REQUIRE_THAT(text, Contains("1 messages paired"));
}

TEST_CASE("summary.json written directly reads back and dumps to the same bytes", "[postproc][summary]") {
  auto [set, a] = summarise();
  // Names that need escaping: quotes, control bytes, non-ASCII, invalid UTF-8.
  a.files.files[3].path = "/data/\"out\"\t\xc3\xa9\xff";
  a.summary.ranks[1].io_ns = 123456789012;    // seconds with many digits
  a.summary.ranks[0].mpi_ns = 5'000'000'000;  // integral seconds: written 5.0
  postproc::SummaryHeader h = postproc::header_of(set);
  h.hosts[1] = "node\\1\n";
  h.placements = {trace::CpuPlacement{2, 8}};  // rank 1's not known: no "placement" member
  nlohmann::json extra = {{"plan", {{"streams", 2}}}, {"zzz", nlohmann::json::array()}, {"complete", false}};
  nlohmann::json whole = postproc::summary_json(h, a);
  for (const auto& [k, v] : extra.items()) whole[k] = v;
  auto dumped = [](const nlohmann::json& j) {
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  };
  REQUIRE(postproc::summary_json_text(h, a, extra) == dumped(whole));
  SECTION("no files, no ranks") {
    a.files.files.clear();
    a.summary.files.clear();
    h.hosts.clear();
    h.placements.clear();
    nlohmann::json empty = postproc::summary_json(h, a);
    REQUIRE(postproc::summary_json_text(h, a, {}) == dumped(empty));
  }
}
