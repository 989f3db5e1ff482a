#include <fcntl.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "preload/fd_table.hpp"

using namespace mpior::preload;

TEST_CASE("paths are made absolute and lexically normal", "[preload][paths]") {
  REQUIRE(lexically_normal("/a/b/../c/./d//e") == "/a/c/d/e");
  REQUIRE(lexically_normal("/../..") == "/");
  REQUIRE(lexically_normal("/a/b/") == "/a/b");
  // Names that only look like "." or ".." are kept as they are.
  for (const char* normal : {"/", "/a", "/a/.b", "/a/..b/c", "/.../x", "/a/b.", "/a/b.."})
    REQUIRE(lexically_normal(normal) == normal);
  REQUIRE(lexically_normal("/a/b/.") == "/a/b");
  REQUIRE(lexically_normal("/a/b/..") == "/a");
  REQUIRE(lexically_normal("//a") == "/a");
  REQUIRE(lexically_normal("/.") == "/");
  REQUIRE(lexically_normal("a/b") == "/a/b");
  REQUIRE(absolute_path(AT_FDCWD, "/x/./y") == "/x/y");
  char cwd[4096];
  REQUIRE(getcwd(cwd, sizeof cwd));
  REQUIRE(absolute_path(AT_FDCWD, "sub/../f.txt") == lexically_normal(std::string(cwd) + "/f.txt"));
  int dir = open("/usr", O_RDONLY | O_DIRECTORY);
  REQUIRE(dir >= 0);
  REQUIRE(absolute_path(dir, "lib/../bin") == "/usr/bin");
  close(dir);
}

TEST_CASE("a call's path is viewed in place when already normal", "[preload][paths]") {
  const char* normal = "/dev/shm/data.bin";
  const AbsolutePath same(AT_FDCWD, normal);
  REQUIRE(same.view() == normal);
  REQUIRE(same.view().data() == normal);  // no copy
  for (const char* already : {"/", "/a", "/a/.b", "/a/..b/c", "/.../x", "/a/b.", "/a/b.."})
    REQUIRE(AbsolutePath(AT_FDCWD, already).view().data() == already);
  for (const char* other :
       {"/x/./y", "/a//b/", "/a/b/..", "/a/.", "/a/", "//", "/./a", "/../a", "rel/f.txt", "../up", "."}) {
    const AbsolutePath built(AT_FDCWD, other);
    REQUIRE(built.view() == absolute_path(AT_FDCWD, other));
    REQUIRE(built.view().data() != other);
  }
  REQUIRE(AbsolutePath(AT_FDCWD, nullptr).empty());
}

TEST_CASE("excluded prefixes match whole path components", "[preload][paths]") {
  set_excluded({"/proc", "/sys", "/data/traces/"});
  REQUIRE(is_excluded("/proc"));
  REQUIRE(is_excluded("/proc/self/maps"));
  REQUIRE_FALSE(is_excluded("/processes/x"));
  REQUIRE(is_excluded("/data/traces/rank-000000.mpior"));
  REQUIRE_FALSE(is_excluded("/data/traces2/x"));
  REQUIRE_FALSE(is_excluded("/home/u/out"));
  set_excluded({"/proc", "/dev", "!/dev/shm"});  // the default: node-local scratch is traced
  REQUIRE(is_excluded("/dev/null"));
  REQUIRE(is_excluded("/dev"));
  REQUIRE_FALSE(is_excluded("/dev/shm/scratch.dat"));
  REQUIRE_FALSE(is_excluded("/dev/shm"));
  REQUIRE(is_excluded("/dev/shmem"));
  set_excluded({"/dev", "!/dev/shm", "/dev/shm/mpich_*"});  // MPI's own segments stay out
  REQUIRE(is_excluded("/dev/shm/mpich_shar_tmpAWGV9R"));
  REQUIRE_FALSE(is_excluded("/dev/shm/mpich.dat2"));
  REQUIRE_FALSE(is_excluded("/dev/shm/app/mpich_x"));
  // A user's list follows the default: of two equal prefixes the later decides.
  set_excluded({"/proc", "/sys", "!/proc", "/sys"});
  REQUIRE_FALSE(is_excluded("/proc/self/stat"));
  REQUIRE(is_excluded("/sys/devices"));
  set_excluded({"/", "!/home"});  // everything but /home
  REQUIRE(is_excluded("/x"));
  REQUIRE(is_excluded("/"));
  REQUIRE_FALSE(is_excluded("/home/u"));
  set_excluded({"/proc", "!/proc/x*"});
  REQUIRE_FALSE(is_excluded("/proc/xy"));
  REQUIRE(is_excluded("/proc/y"));
  REQUIRE_FALSE(is_excluded("/p"));
}

// The rule as the option states it, prefix by prefix (is_excluded walks a
// trie of the prefixes instead): the longest prefix that holds the path
// decides, the later of two equal ones.
static bool excluded_by_rule(const std::vector<std::string>& list, const std::string& p) {
  size_t best = 0;
  bool excluded = false;
  for (const std::string& entry : list) {
    const bool keep = entry.starts_with('!'), star = entry.ends_with('*') && entry.size() > size_t(keep);
    const std::string pre =
        lexically_normal(entry.substr(keep ? 1 : 0, entry.size() - (keep ? 1 : 0) - (star ? 1 : 0)));
    const bool holds = pre == "/" || (p.starts_with(pre) && (star || p.size() == pre.size() || p[pre.size()] == '/'));
    if (holds && pre.size() >= best) {
      best = pre.size();
      excluded = !keep;
    }
  }
  return excluded;
}

TEST_CASE("excluded paths agree with the longest-prefix rule", "[preload][paths]") {
  const std::vector<std::vector<std::string>> lists = {
      {"/proc", "/sys", "/dev", "!/dev/shm", "/dev/shm/mpich_*", "/dev/shm/ucx_*", "/dev/shm/vader_segment*",
       "/dev/shm/sm_segment*", "/tmp/ompi.*", "/proc", "!/dev/shm/mpich_keep", "/work/traces"},
      {"/a", "/a*", "!/a/b", "/a/b*", "!/ab", "/a/b/c", "/a*"},
      {"/", "!/home", "/home/u/x*", "/home/u/x"},
      {"/x*", "!/x"},
  };
  const char* paths[] = {"/",
                         "/a",
                         "/ab",
                         "/abc",
                         "/a/b",
                         "/a/bc",
                         "/a/b/c",
                         "/a/b/cd",
                         "/a/b/c/d",
                         "/b",
                         "/dev",
                         "/dev/null",
                         "/dev/shm",
                         "/dev/shmem",
                         "/dev/shm/f",
                         "/dev/shm/mpi",
                         "/dev/shm/mpich_1",
                         "/dev/shm/mpich_keep",
                         "/dev/shm/mpich_keep/x",
                         "/dev/shm/mpich_keepx",
                         "/dev/shm/ucx_",
                         "/proc/1/stat",
                         "/processes",
                         "/sys",
                         "/tmp/ompi.x/y",
                         "/tmp/ompi",
                         "/work/traces",
                         "/work/traces/r",
                         "/work/tracesx",
                         "/home",
                         "/home/u/x",
                         "/home/u/xy",
                         "/home/u/x/z",
                         "/homer",
                         "/x",
                         "/xy",
                         "/x/y",
                         "rel/a"};
  for (const auto& list : lists) {
    set_excluded(list);
    for (const char* p : paths) {
      INFO(list.front() << " ... " << list.back() << ": " << p);
      REQUIRE(is_excluded(p) == excluded_by_rule(list, p));
    }
  }
}

TEST_CASE("fopen modes map to open flags", "[preload][stdio]") {
  REQUIRE(flags_of_mode("r") == O_RDONLY);
  REQUIRE(flags_of_mode("rb+") == O_RDWR);
  REQUIRE(flags_of_mode("w") == (O_WRONLY | O_CREAT | O_TRUNC));
  REQUIRE(flags_of_mode("a+") == (O_RDWR | O_CREAT | O_APPEND));
  REQUIRE(flags_of_mode("wxe") == (O_WRONLY | O_CREAT | O_TRUNC | O_EXCL | O_CLOEXEC));
}

TEST_CASE("the file table numbers paths in order of first use", "[preload][files]") {
  FileTable t;
  REQUIRE(t.intern("/a", -1) == 0);
  REQUIRE(t.intern("/b", O_RDONLY) == 1);
  REQUIRE(t.intern("/a", O_WRONLY) == 0);
  auto e = t.entries();
  REQUIRE(e.size() == 2);
  REQUIRE(e[0].flags == O_WRONLY);  // named first by stat, opened later
  REQUIRE(e[1].path == "/b");
  // Named again at once (the thread's last path): flags still set once.
  REQUIRE(t.intern("/c", -1) == 2);
  REQUIRE(t.intern("/c", -1) == 2);
  REQUIRE(t.intern("/c", O_RDONLY) == 2);
  REQUIRE(t.intern("/c", O_WRONLY) == 2);
  REQUIRE(t.entries()[2].flags == O_RDONLY);
  // Another table's numbers are its own.
  FileTable other;
  REQUIRE(other.intern("/b", -1) == 0);
  REQUIRE(other.intern("/c", -1) == 1);
  REQUIRE(t.intern("/c", -1) == 2);
}

TEST_CASE("the fd table classifies fds it did not see opened", "[preload][files]") {
  set_excluded({"/proc"});
  char path[] = "/tmp/mpior-fdtest-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, "abc", 3) == 3);
  FdTable::Slot* s = fds().traced(fd);
  REQUIRE(s != nullptr);
  REQUIRE(files().path(s->file.load()) == path);
  REQUIRE(s->pos.load() == 3);  // picked up from the fd
  int pipefd[2];
  REQUIRE(pipe(pipefd) == 0);
  REQUIRE(fds().traced(pipefd[0]) == nullptr);  // not a file
  fds().forget(fd);
  close(fd);
  close(pipefd[0]);
  close(pipefd[1]);
  unlink(path);
}

TEST_CASE("the stream table survives removal and reuse of slots", "[preload][stdio]") {
  StreamTable t;
  FILE* a = reinterpret_cast<FILE*>(uintptr_t(0x1000));
  FILE* b = reinterpret_cast<FILE*>(uintptr_t(0x2000));
  auto* ea = t.add(a, 5, 7, 0);
  auto* eb = t.add(b, 6, 8, 100);
  REQUIRE(ea != nullptr);
  REQUIRE(eb != nullptr);
  REQUIRE(ea->id != eb->id);
  REQUIRE(eb->pos.load() == 100);
  t.remove(a);
  auto* again = t.add(a, 9, 7, 0);
  REQUIRE(again->file == 9);
}
