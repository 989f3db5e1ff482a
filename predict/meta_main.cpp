// mpior-predict-meta OP WORKERS OPS [PASSES [SECONDS [FILE_BYTES [SYNCED [TRUNCATED]]]]]: the metadata
// benchmark
// mpior-predict runs for a create, open, close, stat, unlink, mkdir, rmdir or
// rename class (fio 3.33 has engines for create, stat and delete only, and
// its filecreate mixes the opens' latencies with its no-op writes'). WORKERS
// processes (the ranks that did it at once) each time OPS calls of OP in one
// directory shared by all, the current one (mdtest's default layout), after
// starting together; what a call needs (the file to stat, the directory to
// remove) is made before and removed after, untimed; PASSES times over, or
// fewer once a worker has run SECONDS (the untimed part can cost more than
// the calls); the files made hold FILE_BYTES (0), fsynced when SYNCED is 1; a
// close's descriptor is the one that wrote them, after truncating the file to
// zero when TRUNCATED is 1 (what a close flushes depends on both).
// Prints one JSON object: the calls timed and the mean seconds per call over
// all workers.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

namespace {

enum class Meta { create, open, close, stat, unlink, mkdir, rmdir, rename };

constexpr std::string_view kNames[] = {"create", "open", "close", "stat", "unlink", "mkdir", "rmdir", "rename"};

int64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "mpior-predict-meta: %s: %s\n", what.c_str(), std::strerror(errno));
  _exit(1);
}

// What the files the calls act on hold: an unlink frees their pages, and on a disk the blocks a sync made
// the file system allocate.
struct FileContent {
  int64_t bytes = 0;
  bool synced = false, truncated = false;
};

// The file opened for writing, holding content's bytes (untimed); the descriptor stays open.
int write_file(const std::string& p, const FileContent& content) {
  int fd = ::open(p.c_str(), O_CREAT | O_WRONLY, 0644);
  if (fd < 0) fail("cannot create " + p);
  if (content.truncated && ::ftruncate(fd, 0) != 0) fail("cannot truncate " + p);
  static const std::vector<char> chunk(size_t(1) << 20, 'x');
  for (int64_t left = content.bytes; left > 0;) {
    ssize_t n = ::write(fd, chunk.data(), size_t(std::min<int64_t>(left, int64_t(chunk.size()))));
    if (n <= 0) fail("cannot write " + p);
    left -= n;
  }
  if (content.synced && content.bytes > 0 && ::fsync(fd) != 0) fail("cannot sync " + p);
  return fd;
}

void make_file(const std::string& p, const FileContent& content) { ::close(write_file(p, content)); }

// Before the timed calls: what they act on.
void prepare(Meta m, const std::string& p, const FileContent& content) {
  if (m == Meta::rmdir) {
    if (::mkdir(p.c_str(), 0755) != 0) fail("cannot make " + p);
  } else if (m != Meta::create && m != Meta::mkdir && m != Meta::close) {
    make_file(p, content);
  }
}

// One timed call (close: of a descriptor opened and written untimed); what it leaves is removed by tidy.
int64_t timed(Meta m, const std::string& p, const FileContent& content) {
  int fd = m == Meta::close ? write_file(p, content) : -1;
  struct stat st {};
  int64_t t0 = now_ns();
  int rc = 0;
  switch (m) {
    case Meta::create:
      rc = fd = ::open(p.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
      break;
    case Meta::open:
      rc = fd = ::open(p.c_str(), O_RDONLY);
      break;
    case Meta::close:
      rc = ::close(fd), fd = -1;
      break;
    case Meta::stat:
      rc = ::stat(p.c_str(), &st);
      break;
    case Meta::unlink:
      rc = ::unlink(p.c_str());
      break;
    case Meta::mkdir:
      rc = ::mkdir(p.c_str(), 0755);
      break;
    case Meta::rmdir:
      rc = ::rmdir(p.c_str());
      break;
    case Meta::rename:
      rc = ::rename(p.c_str(), (p + ".moved").c_str());
      break;
  }
  int64_t t = now_ns() - t0;
  if (rc < 0) fail(fmt::format("{} {}", kNames[size_t(m)], p));
  if (fd >= 0) ::close(fd);
  return t;
}

void tidy(Meta m, const std::string& p) {
  if (m == Meta::mkdir) ::rmdir(p.c_str());
  if (m == Meta::rename) ::unlink((p + ".moved").c_str());
  if (m != Meta::unlink && m != Meta::rmdir && m != Meta::mkdir && m != Meta::rename) ::unlink(p.c_str());
}

struct Result {
  int64_t ns = 0, calls = 0;
};

// One worker: per pass, prepare, wait for the start (first pass), time, tidy. Writes its Result to `out`.
void worker(Meta m, int id, int64_t ops, int64_t passes, double seconds, const FileContent& content, int start,
            int ready, int out) {
  Result r;
  int64_t began = 0;
  for (int64_t pass = 0; pass < passes && (pass == 0 || double(now_ns() - began) < seconds * 1e9); ++pass) {
    std::vector<std::string> names;
    for (int64_t i = 0; i < ops; ++i) names.push_back(fmt::format("w{}.{}", id, i));
    for (const std::string& n : names) prepare(m, n, content);
    if (pass == 0) {
      char c = 1, d;
      if (write(ready, &c, 1) != 1) fail("start");
      close(ready);  // a worker that fails before this leaves the others' bytes and an end to read
      if (read(start, &d, 1) < 0) fail("start");
      began = now_ns();
    }
    for (const std::string& n : names) r.ns += timed(m, n, content);
    r.calls += ops;
    for (const std::string& n : names) tidy(m, n);
  }
  if (write(out, &r, sizeof r) != sizeof r) fail("result");
  _exit(0);
}

int usage() {
  std::fprintf(stderr,
               "usage: mpior-predict-meta create|open|close|stat|unlink|mkdir|rmdir|rename WORKERS OPS [PASSES "
               "[SECONDS [FILE_BYTES [SYNCED [TRUNCATED]]]]]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 9) return usage();
  int op = -1;
  for (size_t i = 0; i < std::size(kNames); ++i)
    if (kNames[i] == argv[1]) op = int(i);
  long workers = std::strtol(argv[2], nullptr, 10), ops = std::strtol(argv[3], nullptr, 10);
  long passes = argc > 4 ? std::strtol(argv[4], nullptr, 10) : 1;
  double seconds = argc > 5 ? std::strtod(argv[5], nullptr) : 1e9;
  FileContent content{argc > 6 ? std::strtoll(argv[6], nullptr, 10) : 0, argc > 7 && std::string_view(argv[7]) == "1",
                      argc > 8 && std::string_view(argv[8]) == "1"};
  if (op < 0 || workers < 1 || workers > 4096 || ops < 1 || passes < 1 || !(seconds > 0) || content.bytes < 0)
    return usage();
  int start[2], ready[2], out[2];
  if (pipe(start) != 0 || pipe(ready) != 0 || pipe(out) != 0) fail("pipe");
  for (long w = 0; w < workers; ++w) {
    pid_t pid = fork();
    if (pid < 0) fail("fork");
    if (pid == 0) {
      close(start[1]);
      worker(Meta(op), int(w), ops, passes, seconds, content, start[0], ready[1], out[1]);
    }
  }
  close(start[0]);
  close(ready[1]);
  close(out[1]);
  for (long w = 0; w < workers; ++w) {
    char c;
    if (read(ready[0], &c, 1) != 1) fail("a worker stopped before its calls");
  }
  close(start[1]);  // every worker's read returns: they start together
  Result total, one;
  long done = 0;
  while (read(out[0], &one, sizeof one) == sizeof one) total.ns += one.ns, total.calls += one.calls, ++done;
  int failed = 0, st = 0;
  while (wait(&st) > 0) failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  if (failed || done != workers) {
    std::fprintf(stderr, "mpior-predict-meta: %d of %ld workers failed\n", failed, workers);
    return 1;
  }
  std::printf("{\"op\": \"%s\", \"workers\": %ld, \"calls\": %lld, \"seconds_per_call\": %.9g}\n", argv[1], workers,
              (long long)total.calls, double(total.ns) / 1e9 / double(total.calls));
  return 0;
}
