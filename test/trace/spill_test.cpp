// Spill segments (MPIOR_MEMORY): a builder cut anywhere gives back every event
// when its parts are concatenated; a spill file is read up to a torn segment.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <random>

#include "trace/arg_setters.hpp"
#include "trace/arg_views.hpp"
#include "trace/builder.hpp"
#include "trace/cursor.hpp"
#include "trace/format.hpp"
#include "trace/spill_reader.hpp"

using namespace mpior::trace;
namespace fs = std::filesystem;

namespace {

struct Ev {
  Kind kind;
  int64_t offset, start, dur;
  bool operator==(const Ev&) const = default;
};

// A loop of pread/pwrite at random offsets with a regular three-call loop
// every 50 calls (an iteration may be open at any cut).
std::vector<RawEvent> program(int n) {
  std::mt19937_64 rng(7);
  std::vector<RawEvent> out;
  int64_t now = 10;
  for (int i = 0; i < n; ++i) {
    RawEvent ev;
    bool regular = (i / 50) % 2 == 1;
    ev.kind = regular ? (i % 3 == 0 ? Kind::lseek : Kind::write) : (i % 2 ? Kind::pwrite : Kind::pread);
    ev.callsite = regular ? uint64_t(100 + i % 3) : uint64_t(1 + i % 2);
    io_args_mut(ev).handle() = 3;
    io_args_mut(ev).file() = 3;
    io_args_mut(ev).offset() = regular ? int64_t(i) * 64 : int64_t(rng() % 16384) * 64;
    io_args_mut(ev).count() = 64;
    ev.ret = 64;
    ev.start = now;
    ev.end = now + 5 + i % 7;
    now = ev.end + 3 + i % 5;
    out.push_back(ev);
  }
  return out;
}

std::vector<Ev> events_of(const Stream& s) {
  std::vector<Ev> out;
  EventCursor c(s, 0);
  Event ev;
  while (c.next(ev)) out.push_back({ev.kind, io_args(ev).offset(), ev.start_ns, ev.dur_ns});
  return out;
}

// Builds the program, cutting the folder every `every` events; the parts as
// spill segments plus the rest as the rank trace.
std::pair<std::vector<SpillSegment>, Stream> cut_run(const std::vector<RawEvent>& evs, size_t every) {
  StreamBuilder b(BuilderOptions{.lossless = true});
  std::vector<SpillSegment> segs;
  for (size_t i = 0; i < evs.size(); ++i) {
    b.append(evs[i]);
    if ((i + 1) % every) continue;
    FoldedPart part = b.swap(b.spare());
    REQUIRE(part.events() == every);
    segs.push_back({0, segs.size(), part.finish(0, 0)});
  }
  return {std::move(segs), b.snapshot(0, 0)};
}

std::string temp_dir() {
  std::string d = fs::temp_directory_path() / ("mpior-spill-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& b, const char* mode) {
  FILE* f = std::fopen(path.c_str(), mode);
  REQUIRE(f);
  REQUIRE(std::fwrite(b.data(), 1, b.size(), f) == b.size());
  std::fclose(f);
}

}  // namespace

TEST_CASE("a builder cut anywhere gives back every event, in order, with its times", "[spill]") {
  auto evs = program(2000);
  StreamBuilder whole(BuilderOptions{.lossless = true});
  for (const RawEvent& ev : evs) whole.append(ev);
  const std::vector<Ev> want = events_of(whole.snapshot(0, 0));
  REQUIRE(want.size() == evs.size());
  for (size_t every : {7u, 64u, 333u, 1000u}) {
    auto [segs, rest] = cut_run(evs, every);
    Stream joined = segs.front().stream;
    for (size_t i = 1; i < segs.size(); ++i) append_stream(joined, segs[i].stream);
    append_stream(joined, rest);
    INFO("cut every " << every);
    REQUIRE(events_of(joined) == want);
  }
}

TEST_CASE("a rank trace is read with its spill file; a torn or damaged last segment is ignored", "[spill]") {
  auto evs = program(1200);
  auto [segs, rest] = cut_run(evs, 250);  // 4 segments, 200 events left in memory
  REQUIRE(segs.size() == 4);
  std::string dir = temp_dir();
  RankTrace t;
  t.process.size = 1;
  t.streams.push_back(rest);
  t.spill_segments = 4;
  write_file_atomic(dir + "/" + rank_file_name(0), encode(t));
  std::string spill = dir + "/" + spill_file_name(0);
  for (const SpillSegment& s : segs) write_bytes(spill, encode(s), "ab");
  REQUIRE(spill_file_name(3) == "rank-000003.spill.mpior");
  REQUIRE(rank_from_file_name(spill_file_name(3)) == -1);

  std::vector<std::string> warnings;
  RankTrace back = read_rank_trace_with_spill(dir, 0, &warnings);
  REQUIRE(warnings.empty());
  REQUIRE(back.streams.size() == 1);
  std::vector<Ev> all = events_of(back.streams[0]);
  REQUIRE(all.size() == evs.size());
  for (size_t i = 0; i < evs.size(); ++i) REQUIRE(all[i].offset == io_args(evs[i]).offset());

  SECTION("a segment appended after the rank file was written is not read twice") {
    SpillSegment late{0, 4, rest};
    write_bytes(spill, encode(late), "ab");
    REQUIRE(events_of(read_rank_trace_with_spill(dir, 0, &warnings).streams[0]).size() == evs.size());
    REQUIRE(warnings.empty());
  }
  SECTION("torn: the last segment cut short") {
    std::vector<uint8_t> bytes = read_file(spill);
    fs::resize_file(spill, bytes.size() - 37);
    back = read_rank_trace_with_spill(dir, 0, &warnings);
    REQUIRE(warnings.size() == 2);  // the torn segment, and the events lost with it
    REQUIRE(warnings[0].find("segment 3") != std::string::npos);
    REQUIRE(events_of(back.streams[0]).size() == evs.size() - 250);
  }
  SECTION("damaged: a flipped byte inside the last segment") {
    std::vector<uint8_t> bytes = read_file(spill);
    bytes[bytes.size() - 60] ^= 0x40;
    write_bytes(spill, bytes, "wb");
    std::string damage;
    auto read = decode_spill(bytes, spill, &damage);
    REQUIRE(read.size() == 3);
    REQUIRE(damage.find("checksum") != std::string::npos);
  }
  fs::remove_all(dir);
}
