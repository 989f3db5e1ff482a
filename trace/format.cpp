#include "trace/format.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "trace/format_body.hpp"

namespace mpior::trace {
namespace {

constexpr size_t kMagicLen = 8;
constexpr size_t kHeaderLen = kMagicLen + 4 + 1 + 8 + 8;
constexpr size_t kTrailerLen = 4 + 8;
constexpr char kEndMarker[] = "MPIOREND";
constexpr size_t kCompressAbove = 512;
// zstd's level: 3, fast enough for the tracer's flushes; a merged job trace
// is written once, by one rank, at finalize: up to 64 KiB (an SPMD job's is
// far smaller) it gets the strongest, which costs milliseconds there but
// grows to a large share of finalize on bodies of megabytes.
constexpr int kLevel = 3;
constexpr int kFastLevel = 1;  // Effort::fast
constexpr size_t kStrongUpTo = size_t(64) << 10;

// `oldest`: the first version its reader still reads (the descriptions'
// io.since decide the fields).
struct TypeInfo {
  const char* magic;
  const char* noun;
  uint32_t version;
  uint32_t oldest;
  int small_level = kLevel;  // zstd's level for a body up to kStrongUpTo
};
constexpr TypeInfo kRankTrace{"MPIORTRC", "rank trace", kFormatVersion, kOldestFormatVersion};
constexpr TypeInfo kJob{"MPIORJOB", "job file", kFormatVersion, kOldestFormatVersion};
constexpr TypeInfo kPlan{"MPIORPLN", "plan", kPlanFormatVersion, kOldestPlanFormatVersion};
constexpr TypeInfo kSpill{"MPIORSPL", "spill segment", kFormatVersion, kOldestFormatVersion};
constexpr TypeInfo kAggregate{kAggregateMagic, "aggregate trace", kFormatVersion, kOldestFormatVersion};
constexpr TypeInfo kMerged{"MPIORMRG", "merged job trace", kMergedFormatVersion, kMergedFormatVersion, 19};

// The thread's compression context, kept between frames: made anew for
// every frame, its tables are most of a small trace's compression time.
// The tracer's final write runs after the main thread's thread_locals are
// destroyed (a library destructor): from then on frames go without one.
// The owner's destructor writes to variables other than its own members
// (stores to a dying object may be dropped by the compiler).
thread_local ZSTD_CCtx* t_cctx = nullptr;
thread_local bool t_cctx_gone = false;
struct ContextOwner {
  ~ContextOwner() {
    ZSTD_freeCCtx(t_cctx);
    t_cctx = nullptr;
    t_cctx_gone = true;
  }
};
thread_local ContextOwner t_cctx_owner;

// Appends in's zstd frame (at zstd's `level`) to *out; false when zstd fails.
bool compress_into(std::span<const uint8_t> in, std::vector<uint8_t>* out, int level = kLevel) {
  if (!t_cctx && !t_cctx_gone) {
    (void)&t_cctx_owner;  // made (its destructor registered) before the context it frees
    t_cctx = ZSTD_createCCtx();
  }
  size_t at = out->size();
  out->resize(at + ZSTD_compressBound(in.size()));
  size_t n = t_cctx ? ZSTD_compressCCtx(t_cctx, out->data() + at, out->size() - at, in.data(), in.size(), level)
                    : ZSTD_compress(out->data() + at, out->size() - at, in.data(), in.size(), level);
  out->resize(ZSTD_isError(n) ? at : at + n);
  return !ZSTD_isError(n);
}

// The container around a body stored as is (compression 0) or as zstd frames.
std::vector<uint8_t> container(const TypeInfo& type, uint8_t compression, uint64_t body_len,
                               std::span<const uint8_t> stored) {
  Encoder e;
  e.raw({reinterpret_cast<const uint8_t*>(type.magic), kMagicLen});
  e.fixed32(type.version);
  e.u8(compression);
  e.fixed64(body_len);
  e.fixed64(stored.size());
  e.raw(stored);
  e.fixed32(crc32c(e.bytes()));
  e.raw({reinterpret_cast<const uint8_t*>(kEndMarker), kMagicLen});
  return std::move(e.bytes());
}

std::vector<uint8_t> wrap(const TypeInfo& type, std::vector<uint8_t>&& body, Effort effort = Effort::small) {
  std::vector<uint8_t> stored;
  int level = effort == Effort::fast ? kFastLevel : body.size() <= kStrongUpTo ? type.small_level : kLevel;
  if (body.size() > kCompressAbove && compress_into(body, &stored, level) && stored.size() < body.size())
    return container(type, 1, body.size(), stored);
  return container(type, 0, body.size(), body);
}

std::string magic_of(std::span<const uint8_t> bytes) {
  if (bytes.size() < kMagicLen) return {};
  return std::string(reinterpret_cast<const char*>(bytes.data()), kMagicLen);
}

const char* noun_of_magic(const std::string& m) {
  for (const TypeInfo* t : {&kRankTrace, &kJob, &kPlan, &kSpill, &kAggregate, &kMerged})
    if (m == t->magic) return t->noun;
  return nullptr;
}

// Checks the container and returns the decompressed body; *version: the
// version it was written at.
std::vector<uint8_t> unwrap(const TypeInfo& type, std::span<const uint8_t> bytes, const std::string& name,
                            uint32_t* version) {
  std::string magic = magic_of(bytes);
  if (magic != type.magic) {
    const char* other = noun_of_magic(magic);
    if (other) throw FormatError(name + ": is an mpior " + other + ", expected a " + type.noun);
    throw FormatError(name + ": not an mpior " + type.noun + " (bad magic number)");
  }
  if (bytes.size() < kHeaderLen) throw FormatError(name + ": truncated (file ends inside the header)");
  Decoder h(bytes.subspan(kMagicLen), name);
  *version = h.fixed32();
  if (*version < type.oldest || *version > type.version)
    throw FormatError(name + ": " + version_mismatch(*version, type.version));
  uint8_t compression = h.u8();
  uint64_t raw_len = h.fixed64(), stored_len = h.fixed64();
  if (bytes.size() < kHeaderLen + kTrailerLen || stored_len > bytes.size() - kHeaderLen - kTrailerLen)
    throw FormatError(name + ": truncated (" + std::to_string(bytes.size()) + " bytes, the header promises " +
                      std::to_string(kHeaderLen + stored_len + kTrailerLen) + ")");
  size_t end = kHeaderLen + stored_len;
  if (std::memcmp(bytes.data() + end + 4, kEndMarker, kMagicLen) != 0)
    throw FormatError(name + ": truncated or damaged (no end marker where the header says the file ends)");
  uint32_t want = Decoder(bytes.subspan(end, 4), name).fixed32();
  if (crc32c(bytes.first(end)) != want) throw FormatError(name + ": checksum mismatch, the file is corrupt");
  if (end + kTrailerLen != bytes.size())
    throw FormatError(name + ": " + std::to_string(bytes.size() - end - kTrailerLen) +
                      " stray bytes after the end marker");
  auto stored = bytes.subspan(kHeaderLen, stored_len);
  if (compression == 0) {
    if (raw_len != stored_len) throw FormatError(name + ": inconsistent body length");
    return {stored.begin(), stored.end()};
  }
  if (compression != 1) throw FormatError(name + ": unknown compression " + std::to_string(compression));
  if (raw_len > (uint64_t(1) << 40)) throw FormatError(name + ": implausible body length");
  std::vector<uint8_t> body(raw_len);
  size_t n = ZSTD_decompress(body.data(), body.size(), stored.data(), stored.size());
  if (ZSTD_isError(n) || n != raw_len) throw FormatError(name + ": body does not decompress");
  return body;
}

template <typename T, typename DecodeFn>
T decode_whole(const TypeInfo& type, std::span<const uint8_t> bytes, const std::string& name, DecodeFn fn) {
  uint32_t version = 0;
  std::vector<uint8_t> body = unwrap(type, bytes, name, &version);
  Decoder d(body, name);
  if (d.fixed32() != kinds_fingerprint())
    d.fail(
        "written by an mpior that intercepts another list of functions (its event kinds are numbered "
        "differently); read it with the mpior that wrote it");
  T out = fn(d, version);
  if (!d.done()) d.fail("unexpected bytes after the " + std::string(type.noun));
  return out;
}

}  // namespace

std::string version_mismatch(uint32_t found, uint32_t reads) {
  std::string v = "format version " + std::to_string(found);
  if (found < reads)
    return v + " (written by an older mpior), this mpior reads version " + std::to_string(reads) +
           ": trace the run again, or read it with the mpior that wrote it";
  return v + " (written by a newer mpior), this mpior reads version " + std::to_string(reads);
}

// Event kinds are stored by number: a file is only readable by an mpior whose
// kind table (trace/api/*.list) is the same, which this checksum of the
// names in order tells.
uint32_t kinds_fingerprint() {
  static const uint32_t fp = [] {
    uint32_t crc = 0;
    for (size_t k = 0; k < kNumKinds; ++k) {
      std::string_view n = name(Kind(k));
      crc = crc32c({reinterpret_cast<const uint8_t*>(n.data()), n.size()}, crc);
      crc = crc32c({reinterpret_cast<const uint8_t*>("\n"), 1}, crc);
    }
    return crc;
  }();
  return fp;
}

std::string rank_file_name(int32_t rank) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "rank-%06d.mpior", rank);
  return buf;
}

int32_t rank_from_file_name(const std::string& name) {
  int rank = -1, len = 0;
  if (std::sscanf(name.c_str(), "rank-%d.mpior%n", &rank, &len) == 1 && size_t(len) == name.size() && rank >= 0)
    return rank;
  return -1;
}

std::string spill_file_name(int32_t rank) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "rank-%06d.spill.mpior", rank);
  return buf;
}

std::string child_file_name(int32_t rank, int64_t pid, uint64_t serial) {
  char buf[80];
  std::snprintf(buf, sizeof buf, "rank-%06d.child-%lld-%llx.mpior", rank, static_cast<long long>(pid),
                static_cast<unsigned long long>(serial));
  return buf;
}

bool child_from_file_name(const std::string& name, int32_t* rank, int64_t* pid) {
  int r = -1, len = 0;
  long long p = -1;
  unsigned long long serial = 0;
  if (std::sscanf(name.c_str(), "rank-%d.child-%lld-%llx.mpior%n", &r, &p, &serial, &len) != 3 ||
      size_t(len) != name.size() || r < 0 || p <= 0)
    return false;
  *rank = r;
  *pid = p;
  return true;
}

std::vector<uint8_t> encode(const RankTrace& t, Effort effort) {
  Encoder e;
  e.fixed32(kinds_fingerprint());
  body::put(e, t);
  return wrap(kRankTrace, std::move(e.bytes()), effort);
}
std::vector<uint8_t> encode(const RankTrace& t, EncodedComms& comms, Effort effort) {
  if (comms.framed > comms.bytes.size()) comms.framed = 0, comms.frames.clear();
  std::span<const uint8_t> table = comms.bytes;
  // The table's whole frames not compressed yet: compressed once, kept.
  while (comms.frame_bytes > 0 && table.size() - comms.framed >= comms.frame_bytes &&
         compress_into(table.subspan(comms.framed, comms.frame_bytes), &comms.frames))
    comms.framed += comms.frame_bytes;
  Encoder head, rest;
  head.fixed32(kinds_fingerprint());
  body::put_rank_head(head, t);
  head.uv(comms.count);
  rest.raw(table.subspan(comms.framed));
  body::put_rank_tail(rest, t);
  size_t body_len = head.bytes().size() + comms.framed + rest.bytes().size();
  if (comms.framed == 0) {  // no frame kept: as encode(t) makes it
    head.raw(rest.bytes());
    return wrap(kRankTrace, std::move(head.bytes()), effort);
  }
  const int level = effort == Effort::fast ? kFastLevel : kLevel;  // the kept frames stay as made
  std::vector<uint8_t> stored;
  if (body_len > kCompressAbove && compress_into(head.bytes(), &stored, level)) {
    stored.insert(stored.end(), comms.frames.begin(), comms.frames.end());
    if (compress_into(rest.bytes(), &stored, level) && stored.size() < body_len)
      return container(kRankTrace, 1, body_len, stored);
  }
  std::vector<uint8_t> body = std::move(head.bytes());
  body.insert(body.end(), table.begin(), table.begin() + long(comms.framed));
  body.insert(body.end(), rest.bytes().begin(), rest.bytes().end());
  return container(kRankTrace, 0, body.size(), body);
}

void EncodedComms::append(const CommEntry& c) {
  Encoder e;
  body::put_comm(e, c);
  bytes.insert(bytes.end(), e.bytes().begin(), e.bytes().end());
  ++count;
}

std::vector<uint8_t> encode(const JobInfo& j) {
  Encoder e;
  e.fixed32(kinds_fingerprint());
  body::put_job_file(e, j);
  return wrap(kJob, std::move(e.bytes()));
}
std::vector<uint8_t> encode(const Plan& p) {
  Encoder e;
  e.fixed32(kinds_fingerprint());
  body::put(e, p);
  return wrap(kPlan, std::move(e.bytes()));
}

std::vector<uint8_t> encode(const MergedJob& m) {
  Encoder e;
  e.fixed32(kinds_fingerprint());
  body::put(e, m);
  return wrap(kMerged, std::move(e.bytes()));
}

std::vector<uint8_t> encode(const SpillSegment& s) {
  Encoder e;
  e.fixed32(kinds_fingerprint());
  body::put(e, s);
  return wrap(kSpill, std::move(e.bytes()));
}

std::vector<SpillSegment> decode_spill(std::span<const uint8_t> bytes, const std::string& name, std::string* damage) {
  std::vector<SpillSegment> out;
  damage->clear();
  size_t at = 0;
  while (at < bytes.size()) {
    auto rest = bytes.subspan(at);
    std::string where = name + " segment " + std::to_string(out.size()) + " (byte " + std::to_string(at) + ")";
    uint64_t stored = 0;
    const bool whole_header = rest.size() >= kHeaderLen + kTrailerLen;
    if (whole_header) stored = Decoder(rest.subspan(kHeaderLen - 8, 8), name).fixed64();
    if (!whole_header || stored > rest.size() - kHeaderLen - kTrailerLen) {
      *damage = where + ": truncated (" + std::to_string(rest.size()) + " bytes left), ignored";
      break;
    }
    try {
      SpillSegment s = decode_whole<SpillSegment>(kSpill, rest.first(kHeaderLen + stored + kTrailerLen), where,
                                                  [](Decoder& d, uint32_t) { return body::get_spill_segment(d); });
      if (s.seq != out.size()) throw FormatError(where + ": numbered " + std::to_string(s.seq));
      out.push_back(std::move(s));
    } catch (const FormatError& e) {
      *damage = std::string(e.what()) + "; it and what follows ignored";
      break;
    }
    at += kHeaderLen + stored + kTrailerLen;
  }
  return out;
}

RankTrace decode_rank_trace(std::span<const uint8_t> bytes, const std::string& name) {
  return decode_whole<RankTrace>(kRankTrace, bytes, name, [](Decoder& d, uint32_t) { return body::get_rank_trace(d); });
}
JobInfo decode_job(std::span<const uint8_t> bytes, const std::string& name) {
  return decode_whole<JobInfo>(kJob, bytes, name, [](Decoder& d, uint32_t v) { return body::get_job_file(d, v); });
}
MergedJob decode_merged_job(std::span<const uint8_t> bytes, const std::string& name) {
  return decode_whole<MergedJob>(kMerged, bytes, name, [](Decoder& d, uint32_t) { return body::get_merged_job(d); });
}
Plan decode_plan(std::span<const uint8_t> bytes, const std::string& name) {
  return decode_whole<Plan>(kPlan, bytes, name, [](Decoder& d, uint32_t v) { return body::get_plan(d, v); });
}

std::string file_type(std::span<const uint8_t> bytes) {
  const char* n = noun_of_magic(magic_of(bytes));
  return n ? n : "";
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError(path + ": cannot open: " + std::strerror(errno));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw FormatError(path + ": read error: " + std::strerror(errno));
  return bytes;
}

void write_file_atomic(const std::string& path, std::span<const uint8_t> bytes) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw FormatError(path + ": cannot write: " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw FormatError(path + ": cannot write: " + std::strerror(e));
    }
    done += size_t(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw FormatError(path + ": cannot write: " + std::strerror(e));
  }
}

RankTrace read_rank_trace(const std::string& path) { return decode_rank_trace(read_file(path), path); }
JobInfo read_job(const std::string& path) { return decode_job(read_file(path), path); }
Plan read_plan(const std::string& path) { return decode_plan(read_file(path), path); }

}  // namespace mpior::trace
