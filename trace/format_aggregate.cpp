#include "trace/format_aggregate.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "trace/codec.hpp"
#include "trace/format.hpp"

namespace mpior::trace {
namespace {

constexpr size_t kMagicLen = 8;
constexpr size_t kFixedHead = kMagicLen + 4 + 8;
constexpr char kEndMarker[] = "MPIOREND";

[[noreturn]] void fail(const std::string& name, const std::string& why) { throw FormatError(name + ": " + why); }

AggregateIndex parse_index(std::span<const uint8_t> index, const std::string& name, size_t data_len) {
  Decoder d(index, name);
  if (d.fixed32() != kinds_fingerprint())
    d.fail("written by an mpior that intercepts another list of functions; read it with the mpior that wrote it");
  AggregateIndex x;
  x.job_id = d.fixed64();
  x.size = int32_t(d.sv());
  if (x.size < 1) d.fail("aggregate of a job of " + std::to_string(x.size) + " ranks");
  x.entries.resize(d.count(7));
  int32_t last = -1;
  for (AggregateEntry& e : x.entries) {
    e.rank = int32_t(d.sv());
    e.offset = d.uv();
    e.length = d.uv();
    e.crc = d.fixed32();
    if (e.rank <= last || e.rank >= x.size)
      d.fail("rank " + std::to_string(e.rank) + "'s entry: rank out of order or outside the job");
    if (e.offset > data_len || e.length > data_len - e.offset)
      d.fail("rank " + std::to_string(e.rank) + "'s entry: bytes " + std::to_string(e.offset) + "+" +
             std::to_string(e.length) + " beyond the file's " + std::to_string(data_len) + " trace bytes");
    last = e.rank;
  }
  if (!d.done()) d.fail("unexpected bytes after the aggregate index");
  return x;
}

}  // namespace

std::string aggregate_file_name(int32_t aggregator) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "ranks-%06d.mpior", aggregator);
  return buf;
}

bool is_aggregate_file_name(const std::string& name) {
  if (name == kJobTracesFileName) return true;
  int r = -1, len = 0;
  return std::sscanf(name.c_str(), "ranks-%d.mpior%n", &r, &len) == 1 && size_t(len) == name.size() && r >= 0;
}

std::vector<uint8_t> aggregate_head(uint64_t job_id, int32_t size, std::span<const int32_t> ranks,
                                    std::span<const uint64_t> lengths, std::span<const uint8_t> traces) {
  Encoder index;
  index.fixed32(kinds_fingerprint());
  index.fixed64(job_id);
  index.sv(size);
  index.uv(ranks.size());
  uint64_t offset = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    index.sv(ranks[i]);
    index.uv(offset);
    index.uv(lengths[i]);
    index.fixed32(crc32c(traces.subspan(offset, lengths[i])));
    offset += lengths[i];
  }
  Encoder e;
  e.raw({reinterpret_cast<const uint8_t*>(kAggregateMagic), kMagicLen});
  e.fixed32(kFormatVersion);
  e.fixed64(index.bytes().size());
  e.raw(index.bytes());
  e.fixed32(crc32c(e.bytes()));
  return std::move(e.bytes());
}

std::span<const uint8_t> aggregate_tail() { return {reinterpret_cast<const uint8_t*>(kEndMarker), kMagicLen}; }

std::vector<uint8_t> encode_aggregate(uint64_t job_id, int32_t size, std::span<const int32_t> ranks,
                                      std::span<const uint64_t> lengths, std::span<const uint8_t> traces) {
  std::vector<uint8_t> out = aggregate_head(job_id, size, ranks, lengths, traces);
  out.insert(out.end(), traces.begin(), traces.end());
  std::span<const uint8_t> tail = aggregate_tail();
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

AggregateIndex decode_aggregate_index(std::span<const uint8_t> bytes, const std::string& name) {
  if (bytes.size() < kMagicLen || std::memcmp(bytes.data(), kAggregateMagic, kMagicLen) != 0) {
    std::string type = file_type(bytes);
    fail(name, type.empty() ? "not an mpior aggregate trace (bad magic number)"
                            : "is an mpior " + type + ", expected an aggregate trace");
  }
  if (bytes.size() < kFixedHead + 4 + kMagicLen) fail(name, "truncated (file ends inside the header)");
  Decoder h(bytes.subspan(kMagicLen, 12), name);
  uint32_t version = h.fixed32();
  if (version < kOldestFormatVersion || version > kFormatVersion) fail(name, version_mismatch(version, kFormatVersion));
  uint64_t index_len = h.fixed64();
  if (index_len > bytes.size() - kFixedHead - 4 - kMagicLen)
    fail(name, "truncated (the index is longer than the file)");
  size_t head_end = kFixedHead + size_t(index_len);
  uint32_t want = Decoder(bytes.subspan(head_end, 4), name).fixed32();
  if (crc32c(bytes.first(head_end)) != want) fail(name, "checksum mismatch in the index, the file is corrupt");
  if (std::memcmp(bytes.data() + bytes.size() - kMagicLen, kEndMarker, kMagicLen) != 0)
    fail(name, "truncated or damaged (no end marker at the end)");
  size_t data_start = head_end + 4;
  AggregateIndex x =
      parse_index(bytes.subspan(kFixedHead, size_t(index_len)), name, bytes.size() - data_start - kMagicLen);
  x.data_start = data_start;
  return x;
}

std::span<const uint8_t> aggregate_entry(std::span<const uint8_t> bytes, const AggregateIndex& index, size_t i,
                                         const std::string& name) {
  const AggregateEntry& e = index.entries.at(i);
  std::span<const uint8_t> out = bytes.subspan(index.data_start + e.offset, e.length);
  if (crc32c(out) != e.crc)
    fail(name, "rank " + std::to_string(e.rank) + "'s entry (bytes " + std::to_string(index.data_start + e.offset) +
                   ".." + std::to_string(index.data_start + e.offset + e.length) +
                   "): checksum mismatch, that rank's trace is corrupt");
  return out;
}

void write_file_durable(const std::string& path, std::span<const std::span<const uint8_t>> parts) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, std::string("cannot write: ") + std::strerror(errno));
  auto give_up = [&](int e) {
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(path, std::string("cannot write: ") + std::strerror(e));
  };
  for (std::span<const uint8_t> part : parts) {
    size_t done = 0;
    while (done < part.size()) {
      ssize_t n = ::write(fd, part.data() + done, part.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) give_up(n < 0 ? errno : ENOSPC);
      done += size_t(n);
    }
  }
  if (::fsync(fd) != 0) give_up(errno);
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    fail(path, std::string("cannot write: ") + std::strerror(e));
  }
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace mpior::trace
