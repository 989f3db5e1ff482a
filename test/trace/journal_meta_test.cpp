// The meta journal as its writer leaves it: frames, then the zeros of a file
// grown ahead of them (a shared mapping), or a frame the death tore.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "trace/codec.hpp"
#include "trace/journal_format.hpp"

using namespace mpior::trace;
namespace fs = std::filesystem;

namespace {

void put_frame(std::vector<uint8_t>& out, const std::vector<uint8_t>& payload) {
  const uint32_t len = uint32_t(payload.size()), crc = crc32c(payload);
  const size_t at = out.size();
  out.resize(at + 8);
  std::memcpy(out.data() + at, &len, 4);
  std::memcpy(out.data() + at + 4, &crc, 4);
  out.insert(out.end(), payload.begin(), payload.end());
}

JournalMeta read_bytes(const std::vector<uint8_t>& bytes, std::vector<std::string>& warnings) {
  const fs::path p = fs::temp_directory_path() / ("mpior-meta-" + std::to_string(getpid()) + ".journal");
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  JournalMeta m = read_meta_journal(p.string(), &warnings);
  fs::remove(p);
  return m;
}

}  // namespace

TEST_CASE("a meta journal grown ahead of its frames reads to its last frame, without a warning") {
  std::vector<uint8_t> bytes;
  put_frame(bytes, journal_file_frame(3, FileEntry{"/scratch/a.dat", 577}));
  put_frame(bytes, journal_file_frame(4, FileEntry{"/scratch/b.dat", -1}));
  bytes.resize(65536);  // the mapped file's unused tail
  std::vector<std::string> warnings;
  JournalMeta m = read_bytes(bytes, warnings);
  REQUIRE(m.files.size() == 2);
  CHECK(m.files[0].first == 3);
  CHECK(m.files[0].second == FileEntry{"/scratch/a.dat", 577});
  CHECK(m.files[1].second.path == "/scratch/b.dat");
  CHECK(warnings.empty());
}

TEST_CASE("a meta journal frame torn before its length was written is dropped with a warning") {
  std::vector<uint8_t> bytes;
  put_frame(bytes, journal_file_frame(3, FileEntry{"/scratch/a.dat", 577}));
  const size_t torn_at = bytes.size();
  put_frame(bytes, journal_file_frame(4, FileEntry{"/scratch/b.dat", 577}));
  std::memset(bytes.data() + torn_at, 0, 4);  // the payload copied, the length not yet
  bytes.resize(8192);
  std::vector<std::string> warnings;
  JournalMeta m = read_bytes(bytes, warnings);
  REQUIRE(m.files.size() == 1);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("torn entry at byte " + std::to_string(torn_at)) != std::string::npos);
}
