#include "test/fuzz/fuzz_run.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>

#include "trace/codec.hpp"

extern char** environ;

namespace mpior::fuzz {
namespace {

constexpr size_t kHeaderLen = 8 + 4 + 1 + 8 + 8;
constexpr char kEnd[] = "MPIOREND";

uint64_t le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

void put_varint(std::vector<uint8_t>& b, size_t at, uint64_t v) {
  std::vector<uint8_t> enc;
  do {
    uint8_t c = v & 0x7F;
    v >>= 7;
    enc.push_back(uint8_t(c | (v ? 0x80 : 0)));
  } while (v);
  b.insert(b.begin() + long(at), enc.begin(), enc.end());
}

}  // namespace

Body unwrap_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<uint8_t> f((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (f.size() < kHeaderLen + 12) throw std::runtime_error(p.string() + ": not an mpior file");
  Body out;
  out.magic.assign(reinterpret_cast<const char*>(f.data()), 8);
  out.version = uint32_t(le64(f.data() + 8) & 0xFFFFFFFF);
  uint8_t compression = f[12];
  uint64_t raw = le64(f.data() + 13), stored = le64(f.data() + 21);
  const uint8_t* s = f.data() + kHeaderLen;
  if (compression == 0) {
    out.body.assign(s, s + stored);
  } else {
    out.body.resize(raw);
    if (ZSTD_decompress(out.body.data(), raw, s, stored) != raw)
      throw std::runtime_error(p.string() + ": body does not decompress");
  }
  return out;
}

std::vector<uint8_t> rewrap(const Body& like, const std::vector<uint8_t>& body) {
  trace::Encoder e;
  e.raw({reinterpret_cast<const uint8_t*>(like.magic.data()), 8});
  e.fixed32(like.version);
  e.u8(0);
  e.fixed64(body.size());
  e.fixed64(body.size());
  e.raw(body);
  e.fixed32(trace::crc32c(e.bytes()));
  e.raw({reinterpret_cast<const uint8_t*>(kEnd), 8});
  return std::move(e.bytes());
}

std::vector<uint8_t> mutate(std::vector<uint8_t> b, std::mt19937_64& rng) {
  static constexpr uint8_t kInteresting[] = {0, 1, 2, 0x7F, 0x80, 0xFF, 0x3F, 0x40};
  static constexpr uint64_t kBig[] = {0, 1, 127, 128, 255, 65535, 1u << 31, (1ull << 32) + 1, 1ull << 40, ~0ull};
  auto pick = [&](size_t n) { return n ? size_t(rng() % n) : 0; };
  int n = 1 + int(rng() % 4);
  for (int k = 0; k < n; ++k) {
    size_t at = pick(b.size());
    switch (rng() % 7) {
      case 0:
        if (!b.empty()) b[at] ^= uint8_t(1u << (rng() % 8));
        break;
      case 1:
        if (!b.empty()) b[at] = kInteresting[rng() % std::size(kInteresting)];
        break;
      case 2:
        b.insert(b.begin() + long(at), 1 + pick(8), uint8_t(rng()));
        break;
      case 3:
        b.erase(b.begin() + long(at), b.begin() + long(std::min(b.size(), at + 1 + pick(16))));
        break;
      case 4: {
        size_t from = pick(b.size()), len = std::min(b.size() - from, 1 + pick(64));
        std::vector<uint8_t> chunk(b.begin() + long(from), b.begin() + long(from + len));
        b.insert(b.begin() + long(at), chunk.begin(), chunk.end());
        break;
      }
      case 5:
        put_varint(b, at, kBig[rng() % std::size(kBig)]);
        break;
      default:
        b.resize(at);
        break;
    }
  }
  return b;
}

void write_bytes(const std::filesystem::path& p, const std::vector<uint8_t>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), long(bytes.size()));
  if (!out) throw std::runtime_error(p.string() + ": cannot write");
}

Outcome run_tool(const std::vector<std::string>& cmd, const std::filesystem::path& err_file, double timeout_s) {
  std::vector<char*> argv;
  for (const std::string& a : cmd) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error(cmd[0] + ": cannot run: " + std::strerror(rc));
  Outcome out;
  int status = 0;
  for (double waited = 0; waitpid(pid, &status, WNOHANG) == 0; waited += 0.001) {
    if (waited > timeout_s) {
      out.timed_out = true;
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    timespec ts{0, 1000000};
    nanosleep(&ts, nullptr);
  }
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  std::ifstream in(err_file);
  out.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return out;
}

bool Tally::add(const Outcome& r, const std::vector<std::string>& cmd) {
  std::string tool = std::filesystem::path(cmd[0]).filename().string();
  std::string why;
  if (r.timed_out)
    why = "did not finish in time";
  else if (r.status < 0)
    why = "killed by signal " + std::to_string(-r.status);
  else if (r.status != 0 && r.status != 1)
    why = "exit status " + std::to_string(r.status);
  else if (r.err.find("terminate called") != std::string::npos)
    why = "uncaught exception";
  else if (r.status == 1 && r.err.rfind(tool + ": ", 0) != 0)
    why = "failed without a message of its own";
  if (why.empty()) {
    ++(r.status == 0 ? ok : rejected);
    return true;
  }
  ++failures;
  std::cerr << "FAIL: " << tool << " " << cmd[1] << ": " << why << "\n" << r.err.substr(0, 2000) << "\n";
  return false;
}

std::string Tally::summary() const {
  return std::to_string(ok) + " runs accepted, " + std::to_string(rejected) + " rejected with a message, " +
         std::to_string(failures) + " failures (crash, hang, uncaught exception)";
}

}  // namespace mpior::fuzz
