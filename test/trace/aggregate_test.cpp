#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "trace/format.hpp"
#include "trace/format_aggregate.hpp"

using namespace mpior::trace;

namespace {

RankTrace rank_trace(int32_t rank) {
  RankTrace t;
  t.process.job_id = 77;
  t.process.rank = rank;
  t.process.size = 8;
  t.process.mpi = true;
  t.process.finished = true;
  t.process.host = "node" + std::to_string(rank / 4);
  t.files = {{"<stdin>", -1}, {"<stdout>", -1}, {"<stderr>", -1}, {"/data/out." + std::to_string(rank), 0101}};
  return t;
}

struct Built {
  std::vector<int32_t> ranks;
  std::vector<uint64_t> lengths;
  std::vector<uint8_t> traces, file;
};

Built build(std::vector<int32_t> ranks) {
  Built b;
  b.ranks = ranks;
  for (int32_t r : ranks) {
    std::vector<uint8_t> one = encode(rank_trace(r));
    b.lengths.push_back(one.size());
    b.traces.insert(b.traces.end(), one.begin(), one.end());
  }
  b.file = encode_aggregate(77, 8, b.ranks, b.lengths, b.traces);
  return b;
}

std::string message(std::span<const uint8_t> bytes, bool entries = true) {
  try {
    AggregateIndex x = decode_aggregate_index(bytes, "agg");
    if (entries)
      for (size_t i = 0; i < x.entries.size(); ++i) aggregate_entry(bytes, x, i, "agg");
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("an aggregate holds each rank's trace as written", "[aggregate]") {
  Built b = build({4, 5, 7});
  AggregateIndex x = decode_aggregate_index(b.file, "agg");
  REQUIRE(x.job_id == 77);
  REQUIRE(x.size == 8);
  REQUIRE(x.entries.size() == 3);
  REQUIRE(file_type(b.file) == "aggregate trace");
  for (size_t i = 0; i < 3; ++i) {
    REQUIRE(x.entries[i].rank == b.ranks[i]);
    REQUIRE(x.entries[i].length == b.lengths[i]);
    REQUIRE(decode_rank_trace(aggregate_entry(b.file, x, i, "agg"), "entry") == rank_trace(b.ranks[i]));
  }
}

TEST_CASE("an empty aggregate reads back empty", "[aggregate]") {
  std::vector<uint8_t> file = encode_aggregate(1, 2, {}, {}, {});
  REQUIRE(decode_aggregate_index(file, "agg").entries.empty());
}

TEST_CASE("a damaged aggregate names the file and the rank entry", "[aggregate]") {
  Built b = build({0, 1, 2, 3});
  AggregateIndex x = decode_aggregate_index(b.file, "agg");
  SECTION("a flipped byte in rank 2's trace") {
    b.file[x.data_start + x.entries[2].offset + 20] ^= 0x40;
    REQUIRE_THAT(message(b.file), Catch::Contains("agg: rank 2's entry") && Catch::Contains("checksum mismatch"));
    REQUIRE(message(b.file, false).empty());  // the index itself is sound
  }
  SECTION("a flipped byte in the index") {
    b.file[30] ^= 1;
    REQUIRE_THAT(message(b.file), Catch::Contains("agg: checksum mismatch in the index"));
  }
  SECTION("truncated") {
    b.file.resize(b.file.size() - 100);
    REQUIRE_THAT(message(b.file), Catch::Contains("agg: truncated"));
  }
  SECTION("cut inside the header") {
    b.file.resize(14);
    REQUIRE_THAT(message(b.file), Catch::Contains("agg: truncated"));
  }
  SECTION("another file type") {
    REQUIRE_THAT(message(encode(rank_trace(0))), Catch::Contains("is an mpior rank trace, expected an aggregate"));
  }
  SECTION("a rank file where an aggregate is expected, and the reverse") {
    REQUIRE_THROWS_WITH(decode_rank_trace(b.file, "agg"), Catch::Contains("is an mpior aggregate trace"));
  }
}

TEST_CASE("an index entry pointing outside the file is refused", "[aggregate]") {
  Built b = build({0});
  b.lengths[0] += 1000;  // claims more bytes than there are
  std::vector<uint8_t> head =
      aggregate_head(77, 8, b.ranks, {b.lengths.data(), 1}, std::vector<uint8_t>(b.lengths[0], 0));
  std::vector<uint8_t> file = head;
  file.insert(file.end(), b.traces.begin(), b.traces.end());
  std::span<const uint8_t> tail = aggregate_tail();
  file.insert(file.end(), tail.begin(), tail.end());
  REQUIRE_THAT(message(file), Catch::Contains("rank 0's entry: bytes 0+") && Catch::Contains("beyond the file"));
}

TEST_CASE("aggregate file names", "[aggregate]") {
  REQUIRE(aggregate_file_name(4) == "ranks-000004.mpior");
  REQUIRE(is_aggregate_file_name("ranks-000004.mpior"));
  REQUIRE(is_aggregate_file_name(kJobTracesFileName));
  REQUIRE_FALSE(is_aggregate_file_name("rank-000004.mpior"));
  REQUIRE_FALSE(is_aggregate_file_name("ranks-4.mpior.tmp.12"));
  REQUIRE(rank_from_file_name("ranks-000004.mpior") == -1);
}

TEST_CASE("a job record's layout round-trips", "[aggregate]") {
  JobInfo j;
  j.job_id = 9;
  j.size = 8;
  j.trace_files = {{"ranks-000000.mpior", {0, 1, 2, 3}}, {"ranks-000004.mpior", {4, 5, 6}}, {"rank-000007.mpior", {7}}};
  REQUIRE(decode_job(encode(j), "job") == j);
  j.trace_files.clear();
  REQUIRE(decode_job(encode(j), "job") == j);
}

TEST_CASE("a durable write leaves exactly the parts", "[aggregate]") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("mpior-agg-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Built b = build({1, 3});
  std::vector<uint8_t> head = aggregate_head(77, 8, b.ranks, b.lengths, b.traces);
  std::span<const uint8_t> parts[] = {head, b.traces, aggregate_tail()};
  write_file_durable((dir / "ranks.mpior").string(), parts);
  REQUIRE(read_file((dir / "ranks.mpior").string()) == b.file);
  REQUIRE(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);  // no temporary left
  REQUIRE_THROWS_WITH(write_file_durable((dir / "no" / "such").string(), parts), Catch::Contains("cannot write"));
  fs::remove_all(dir);
}
