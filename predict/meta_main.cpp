// mpior-predict-meta OP WORKERS OPS [PASSES [SECONDS [FILE_BYTES [SYNCED [TRUNCATED [SHARED]]]]]]: the
// metadata benchmark
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
// zero when TRUNCATED is 1 (what a close flushes depends on both). With SHARED 1 (close only) the
// workers' descriptors are of one file per call, as ranks closing a file they share: worker 0 creates it
// (and truncates it, TRUNCATED 1) once all have opened it, each writes its FILE_BYTES at its own offset,
// and they close together.
// Prints one JSON object: the calls timed and the mean seconds per call over
// all workers.
#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
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
  bool shared = false;  // one file per call for all workers (close)
};

// The workers of a shared file's calls meet before each step (a process-shared barrier in memory all of
// them map); worker 0 says whether they make another pass. Null for a file per worker.
struct TeamMemory {
  pthread_barrier_t meet;
  int more = 0;
};

struct Team {
  TeamMemory* mem = nullptr;
  int id = 0;
  void step() const {
    if (mem) pthread_barrier_wait(&mem->meet);
  }
};

TeamMemory* team_memory(long workers) {
  void* m = mmap(nullptr, sizeof(TeamMemory), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) fail("mmap");
  auto* t = new (m) TeamMemory;
  pthread_barrierattr_t attr;
  pthread_barrierattr_init(&attr);
  pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  if (pthread_barrier_init(&t->meet, &attr, unsigned(workers)) != 0) fail("barrier");
  return t;
}

// Whether a worker makes pass `pass`: the first, then while it has run under `seconds`; a team makes the
// passes worker 0 makes, or one would wait at a step the others never reach.
bool go_on(const Team& team, int64_t pass, int64_t began, double seconds) {
  bool more = pass == 0 || double(now_ns() - began) < seconds * 1e9;
  if (!team.mem) return more;
  if (team.id == 0) team.mem->more = more;
  team.step();
  return team.mem->more != 0;
}

// content's bytes written at `at` (untimed), synced where asked.
void fill(int fd, const std::string& p, const FileContent& content, int64_t at) {
  static const std::vector<char> chunk(size_t(1) << 20, 'x');
  for (int64_t done = 0; done < content.bytes;) {
    ssize_t n =
        ::pwrite(fd, chunk.data(), size_t(std::min<int64_t>(content.bytes - done, int64_t(chunk.size()))), at + done);
    if (n <= 0) fail("cannot write " + p);
    done += n;
  }
  if (content.synced && content.bytes > 0 && ::fsync(fd) != 0) fail("cannot sync " + p);
}

// The file opened for writing, holding content's bytes (untimed); the descriptor stays open.
int write_file(const std::string& p, const FileContent& content) {
  int fd = ::open(p.c_str(), O_CREAT | O_WRONLY, 0644);
  if (fd < 0) fail("cannot create " + p);
  if (content.truncated && ::ftruncate(fd, 0) != 0) fail("cannot truncate " + p);
  fill(fd, p, content, 0);
  return fd;
}

// As write_file for a file the team shares, as ranks do through MPI-IO: worker 0 creates it, all open it,
// worker 0 truncates it, each writes its part; they return together (to close together).
int write_shared(const std::string& p, const FileContent& content, const Team& team) {
  if (team.id == 0) ::close(::open(p.c_str(), O_CREAT | O_WRONLY, 0644));
  team.step();
  int fd = ::open(p.c_str(), O_WRONLY);
  if (fd < 0) fail("cannot open " + p);
  team.step();
  if (team.id == 0 && content.truncated && ::ftruncate(fd, 0) != 0) fail("cannot truncate " + p);
  team.step();
  fill(fd, p, content, int64_t(team.id) * content.bytes);
  team.step();
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
int64_t timed(Meta m, const std::string& p, const FileContent& content, const Team& team) {
  int fd = m != Meta::close ? -1 : content.shared ? write_shared(p, content, team) : write_file(p, content);
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
void worker(Meta m, const Team& team, int64_t ops, int64_t passes, double seconds, const FileContent& content,
            int start, int ready, int out) {
  Result r;
  int64_t began = 0;
  for (int64_t pass = 0; pass < passes && go_on(team, pass, began, seconds); ++pass) {
    std::vector<std::string> names;
    for (int64_t i = 0; i < ops; ++i)
      names.push_back(content.shared ? fmt::format("s.{}", i) : fmt::format("w{}.{}", team.id, i));
    for (const std::string& n : names) prepare(m, n, content);
    if (pass == 0) {
      char c = 1, d;
      if (write(ready, &c, 1) != 1) fail("start");
      close(ready);  // a worker that fails before this leaves the others' bytes and an end to read
      if (read(start, &d, 1) < 0) fail("start");
      began = now_ns();
    }
    for (const std::string& n : names) r.ns += timed(m, n, content, team);
    r.calls += ops;
    team.step();  // every worker closed the shared files
    if (team.id == 0 || !content.shared)
      for (const std::string& n : names) tidy(m, n);
  }
  if (write(out, &r, sizeof r) != sizeof r) fail("result");
  _exit(0);
}

int usage() {
  std::fprintf(stderr,
               "usage: mpior-predict-meta create|open|close|stat|unlink|mkdir|rmdir|rename WORKERS OPS [PASSES "
               "[SECONDS [FILE_BYTES [SYNCED [TRUNCATED [SHARED]]]]]] (SHARED: close only)\n");
  return 2;
}

// The workers' results once all ended; a worker that failed ends the others (a team's would wait for it at
// their next step). Results fit in the pipe (16 bytes a worker, at most 4096 workers).
bool collect(const std::vector<pid_t>& pids, int from, Result& total) {
  int failed = 0, st = 0;
  for (pid_t pid; (pid = wait(&st)) > 0;)
    if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0) && failed++ == 0)
      for (pid_t other : pids)
        if (other != pid) kill(other, SIGKILL);
  Result one;
  long done = 0;
  while (read(from, &one, sizeof one) == sizeof one) total.ns += one.ns, total.calls += one.calls, ++done;
  if (failed || done != long(pids.size())) {
    std::fprintf(stderr, "mpior-predict-meta: %d of %zu workers failed\n", failed, pids.size());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 10) return usage();
  int op = -1;
  for (size_t i = 0; i < std::size(kNames); ++i)
    if (kNames[i] == argv[1]) op = int(i);
  long workers = std::strtol(argv[2], nullptr, 10), ops = std::strtol(argv[3], nullptr, 10);
  long passes = argc > 4 ? std::strtol(argv[4], nullptr, 10) : 1;
  double seconds = argc > 5 ? std::strtod(argv[5], nullptr) : 1e9;
  auto flag = [&](int i) { return argc > i && std::string_view(argv[i]) == "1"; };
  FileContent content{argc > 6 ? std::strtoll(argv[6], nullptr, 10) : 0, flag(7), flag(8), flag(9)};
  if (op < 0 || workers < 1 || workers > 4096 || ops < 1 || passes < 1 || !(seconds > 0) || content.bytes < 0 ||
      (content.shared && Meta(op) != Meta::close))
    return usage();
  int start[2], ready[2], out[2];
  if (pipe(start) != 0 || pipe(ready) != 0 || pipe(out) != 0) fail("pipe");
  TeamMemory* mem = content.shared ? team_memory(workers) : nullptr;
  std::vector<pid_t> pids;
  for (long w = 0; w < workers; ++w) {
    pid_t pid = fork();
    if (pid < 0) fail("fork");
    if (pid == 0) {
      close(start[1]);
      worker(Meta(op), Team{mem, int(w)}, ops, passes, seconds, content, start[0], ready[1], out[1]);
    }
    pids.push_back(pid);
  }
  close(start[0]);
  close(ready[1]);
  close(out[1]);
  for (long w = 0; w < workers; ++w) {
    char c;
    if (read(ready[0], &c, 1) != 1) fail("a worker stopped before its calls");
  }
  close(start[1]);  // every worker's read returns: they start together
  Result total;
  if (!collect(pids, out[0], total)) return 1;
  std::printf("{\"op\": \"%s\", \"workers\": %ld, \"calls\": %lld, \"seconds_per_call\": %.9g}\n", argv[1], workers,
              (long long)total.calls, double(total.ns) / 1e9 / double(total.calls));
  return 0;
}
