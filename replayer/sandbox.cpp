#include "replayer/sandbox.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <deque>
#include <filesystem>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "trace/tool_error.hpp"

namespace mpior::replay {
namespace {

std::vector<std::string> split_components(std::string_view p) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    if (j > i) out.emplace_back(p.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// Open flags openat2 accepts; it rejects unknown bits where open(2) ignores
// them, and a traced application may have passed any.
constexpr int kKnownOpenFlags = O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_DSYNC |
                                O_SYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC |
                                O_PATH | O_TMPFILE | FASYNC;

int openat2_beneath(int dirfd, const std::string& rel, int flags, mode_t mode) {
  open_how how{};
  how.flags = uint64_t((flags & kKnownOpenFlags) | O_CLOEXEC);
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? (mode & 07777) : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  const char* path = rel.empty() ? "." : rel.c_str();
  for (int attempt = 0;; ++attempt) {
    long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
    if (fd >= 0) return int(fd);
    // EAGAIN: a concurrent rename raced the `..` check; the kernel asks to retry.
    if (errno != EAGAIN || attempt >= 16) return -errno;
  }
}

// Closes the directory fds a userspace walk opened.
struct FdStack {
  std::vector<int> fds;
  ~FdStack() {
    for (int fd : fds) ::close(fd);
  }
  void pop() {
    ::close(fds.back());
    fds.pop_back();
  }
};

// Target of a symlink, or -errno.
int read_link(int dirfd, const std::string& name, std::string* target) {
  std::vector<char> buf(PATH_MAX);
  ssize_t n = ::readlinkat(dirfd, name.c_str(), buf.data(), buf.size());
  if (n < 0) return -errno;
  target->assign(buf.data(), size_t(n));
  return 0;
}

}  // namespace

namespace {

// Directories the replay's metadata calls name entries in, each resolved
// beneath the root once: a stat, unlink or mkdir is then one system call,
// as the application's was, not three (the parent opened, the call, the
// parent closed), which an mdtest replay paid on every file. Per thread:
// replay threads may each have a descriptor table of their own.
struct DirCache {
  static constexpr size_t kMax = 4096;
  uint64_t owner = 0;  // the sandbox's id_
  std::unordered_map<std::string, int> fds;
  void reset(uint64_t id) {
    for (auto& [rel, fd] : fds) ::close(fd);
    fds.clear();
    owner = id;
  }
  ~DirCache() { reset(0); }
};
thread_local DirCache t_dirs;

DirCache& dir_cache(uint64_t sandbox) {
  if (t_dirs.owner != sandbox) t_dirs.reset(sandbox);
  return t_dirs;
}

std::atomic<uint64_t> g_sandboxes{0};

}  // namespace

std::string map_path(std::string_view traced, std::string_view cwd) {
  if (traced == "<stdin>") return "__stdin__";
  if (traced == "<stdout>") return "__stdout__";
  if (traced == "<stderr>") return "__stderr__";
  std::string full;
  if (!traced.starts_with('/')) {
    full.assign(cwd);
    full += '/';
  }
  full += traced;
  std::vector<std::string> kept;
  for (std::string& c : split_components(full)) {
    if (c == ".") continue;
    if (c == "..") {
      if (!kept.empty()) kept.pop_back();  // "/.." is "/" on every POSIX system
      continue;
    }
    kept.push_back(std::move(c));
  }
  std::string out;
  for (const std::string& c : kept) {
    if (!out.empty()) out += '/';
    out += c;
  }
  return out;
}

std::string parent_of(std::string_view rel) {
  size_t slash = rel.rfind('/');
  return slash == std::string_view::npos ? std::string() : std::string(rel.substr(0, slash));
}

std::string leaf_of(std::string_view rel) {
  size_t slash = rel.rfind('/');
  return std::string(slash == std::string_view::npos ? rel : rel.substr(slash + 1));
}

Sandbox::Sandbox(const std::string& root, Resolver resolver) : root_(root), id_(++g_sandboxes) {
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec && !std::filesystem::is_directory(root))
    throw ToolError("cannot create --fs directory " + root + ": " + ec.message());
  root_fd_ = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd_ < 0) throw ToolError("cannot use --fs directory " + root + ": " + std::strerror(errno));
  // Can we create files there? Root bypasses permission bits, so try it.
  int probe = ::openat(root_fd_, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (probe < 0 && errno != EACCES && errno != EROFS && errno != EPERM) {
    std::string name = ".mpior-replay-probe-" + std::to_string(::getpid());
    probe = ::openat(root_fd_, name.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (probe >= 0) ::unlinkat(root_fd_, name.c_str(), 0);
  }
  if (probe < 0) {
    int e = errno;
    ::close(root_fd_);
    throw ToolError("--fs directory " + root + " is not writable: " + std::strerror(e));
  }
  ::close(probe);
  if (resolver == Resolver::kernel || resolver == Resolver::automatic) {
    int fd = openat2_beneath(root_fd_, "", O_PATH, 0);
    kernel_ = fd >= 0 || (fd != -ENOSYS && fd != -EPERM);
    if (fd >= 0) ::close(fd);
    if (!kernel_ && resolver == Resolver::kernel) throw ToolError("openat2(2) is not available on this kernel");
  }
}

Sandbox::~Sandbox() {
  if (t_dirs.owner == id_) t_dirs.reset(0);
  if (root_fd_ >= 0) ::close(root_fd_);
}

std::string Sandbox::display(std::string_view rel) const {
  std::string out = root_;
  if (!rel.empty()) {
    if (!out.ends_with('/')) out += '/';
    out += rel;
  }
  return out;
}

int Sandbox::open(const std::string& rel, int flags, mode_t mode) const {
  bool unnamed = (flags & O_TMPFILE) == O_TMPFILE;
  int fd = unnamed ? -EXDEV : open_in_parent(rel, flags, mode);
  // Beneath its parent, a leaf symlink may not climb (`x -> ../y`) where
  // beneath the root it may: the whole path decides.
  if (fd == -EXDEV || fd == -ELOOP) fd = open_resolved(rel, flags, mode);
  if (unnamed && (fd == -EOPNOTSUPP || fd == -EISDIR)) return open_unnamed(rel, flags, mode);
  return fd;
}

// The leaf opened in its cached parent directory: one path component for the
// kernel to walk, as an application's open relative to its working directory
// walks a few, where the whole mapped path walks the traced absolute path's
// every component (the target root's prefix and the traced working
// directory: eleven for a bench's mdtest file, several microseconds an open
// on a virtual machine).
int Sandbox::open_in_parent(const std::string& rel, int flags, mode_t mode) const {
  if (!kernel_ || rel.empty()) return -EXDEV;
  return in_parent(rel, [&](int dir, const char* leaf) { return openat2_beneath(dir, leaf, flags, mode); });
}

int Sandbox::open_resolved(const std::string& rel, int flags, mode_t mode) const {
  if (kernel_) return openat2_beneath(root_fd_, rel, flags, mode);
  return resolve_user(rel, flags, mode);
}

int Sandbox::open_unnamed(const std::string& dir, int flags, mode_t mode) const {
  static std::atomic<uint32_t> serial{0};
  int named = (flags & ~O_TMPFILE) | O_CREAT | O_EXCL;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string rel = (dir.empty() ? "" : dir + "/") + ".mpior-tmpfile-" + std::to_string(::getpid()) + "-" +
                      std::to_string(serial.fetch_add(1));
    int fd = open_resolved(rel, named, mode);
    if (fd == -EEXIST) continue;
    if (fd >= 0) unlink(rel);
    return fd;
  }
  return -EEXIST;
}

// What openat2 RESOLVE_BENEATH does, for kernels without it: walk one
// component at a time without following anything implicitly, expand
// symlinks by hand, and refuse absolute targets and `..` above the root.
int Sandbox::resolve_user(const std::string& rel, int flags, mode_t mode) const {
  std::deque<std::string> todo;
  for (std::string& c : split_components(rel)) todo.push_back(std::move(c));
  FdStack dirs;
  auto cur = [&] { return dirs.fds.empty() ? root_fd_ : dirs.fds.back(); };
  const bool follow_last = !(flags & O_NOFOLLOW);
  int links = 0;
  auto expand_link = [&](int dirfd, const std::string& name) {
    std::string target;
    if (int r = read_link(dirfd, name, &target); r < 0) return r;
    if (++links > 40) return -ELOOP;
    if (target.empty()) return -ENOENT;
    if (target.starts_with('/')) return -EXDEV;
    auto parts = split_components(target);
    todo.insert(todo.begin(), parts.begin(), parts.end());
    return 0;
  };
  for (;;) {
    if (todo.empty()) {  // the path names a directory already walked (or the root)
      int fd = ::openat(cur(), ".", (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_CLOEXEC, mode);
      return fd >= 0 ? fd : -errno;
    }
    std::string c = std::move(todo.front());
    todo.pop_front();
    if (c == ".") continue;
    if (c == "..") {
      if (dirs.fds.empty()) return -EXDEV;
      dirs.pop();
      continue;
    }
    struct stat st {};
    bool exists = ::fstatat(cur(), c.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (!exists && (errno != ENOENT || !todo.empty())) return -errno;
    if (exists && S_ISLNK(st.st_mode) && (follow_last || !todo.empty())) {
      if (int r = expand_link(cur(), c); r < 0) return r;
      continue;
    }
    if (todo.empty()) {
      // O_NOFOLLOW: if a symlink was swapped in since fstatat, fail rather than follow it.
      int fd = ::openat(cur(), c.c_str(), (flags & kKnownOpenFlags) | O_NOFOLLOW | O_CLOEXEC, mode);
      return fd >= 0 ? fd : -errno;
    }
    if (!S_ISDIR(st.st_mode)) return -ENOTDIR;
    int fd = ::openat(cur(), c.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -errno;
    dirs.fds.push_back(fd);
  }
}

int Sandbox::open_parent(const std::string& rel, std::string* leaf, ParentDir* dir) const {
  *leaf = leaf_of(rel);
  if (leaf->empty()) return -EBUSY;  // the root itself
  std::string parent = parent_of(rel);
  DirCache& cache = dir_cache(id_);
  if (auto it = cache.fds.find(parent); it != cache.fds.end()) {
    dir->fd = it->second, dir->cached = true, dir->rel = std::move(parent);
    return 0;
  }
  int fd = open_resolved(parent, O_PATH | O_DIRECTORY, 0);
  if (fd < 0) return fd;
  dir->fd = fd;
  if (cache.fds.size() >= DirCache::kMax) return 0;  // the caller's to close
  cache.fds.emplace(parent, fd);
  dir->cached = true, dir->rel = std::move(parent);
  return 0;
}

// What the replay removed or moved is no longer where the cache has it;
// other threads' caches find out when a call there fails (in_parent).
void Sandbox::forget_dirs(const std::string& rel, bool below) const {
  DirCache& cache = dir_cache(id_);
  std::erase_if(cache.fds, [&](const auto& entry) {
    const std::string& d = entry.first;
    bool inside = below && (rel.empty() || (d.starts_with(rel) && d.size() > rel.size() && d[rel.size()] == '/'));
    if (d == rel || inside) ::close(entry.second);
    return d == rel || inside;
  });
}

Sandbox::ParentDir::~ParentDir() {
  if (fd >= 0 && !cached) ::close(fd);
}

namespace {
// A call's result as the sandbox returns it: -errno, or what it returned (0, or a descriptor).
int result(int r) { return r < 0 ? -errno : r; }
}  // namespace

// op(dir, leaf) in rel's parent directory. A cached parent where the leaf is
// not found may be a directory another process removed since (MPI mode's
// processes each keep their own): when it is gone (no links left), it is
// looked up again, once.
template <typename Op>
int Sandbox::in_parent(const std::string& rel, Op op) const {
  for (int attempt = 0;; ++attempt) {
    std::string leaf;
    ParentDir dir;
    if (int r = open_parent(rel, &leaf, &dir); r < 0) return r;
    int r = result(op(dir.fd, leaf.c_str()));
    struct stat st {};
    if (r != -ENOENT || !dir.cached || attempt > 0 || (::fstat(dir.fd, &st) == 0 && st.st_nlink > 0)) return r;
    forget_dirs(dir.rel, false);
  }
}

int Sandbox::mkdir(const std::string& rel, mode_t mode) const {
  if (rel.empty()) return -EEXIST;
  return in_parent(rel, [&](int dir, const char* leaf) { return ::mkdirat(dir, leaf, mode); });
}

int Sandbox::rmdir(const std::string& rel) const {
  int r = in_parent(rel, [](int dir, const char* leaf) { return ::unlinkat(dir, leaf, AT_REMOVEDIR); });
  if (r == 0) forget_dirs(rel, false);  // empty: nothing below it was left to cache
  return r;
}

int Sandbox::unlink(const std::string& rel) const {
  return in_parent(rel, [](int dir, const char* leaf) { return ::unlinkat(dir, leaf, 0); });
}

// Runs op(from_dir, from_leaf, to_dir, to_leaf) on both paths' parent
// directories (opened inside the root).
template <typename Op>
int Sandbox::on_two_paths(const std::string& from, const std::string& to, Op op) const {
  std::string from_leaf, to_leaf;
  ParentDir from_dir, to_dir;
  if (int r = open_parent(from, &from_leaf, &from_dir); r < 0) return r;
  if (int r = open_parent(to, &to_leaf, &to_dir); r < 0) return r;
  return result(op(from_dir.fd, from_leaf.c_str(), to_dir.fd, to_leaf.c_str()));
}

int Sandbox::rename(const std::string& from, const std::string& to) const {
  int r = on_two_paths(from, to, [](int fd, const char* f, int td, const char* t) { return ::renameat(fd, f, td, t); });
  if (r == 0) forget_dirs(from, true), forget_dirs(to, true);  // what was below them moved or went
  return r;
}

int Sandbox::link(const std::string& from, const std::string& to) const {
  return on_two_paths(from, to, [](int fd, const char* f, int td, const char* t) { return ::linkat(fd, f, td, t, 0); });
}

// The link's text is relative ("../b/c"), so it names the target inside the root.
int Sandbox::symlink(const std::string& target, const std::string& rel) const {
  std::string leaf;
  ParentDir dir;
  if (int r = open_parent(rel, &leaf, &dir); r < 0) return r;
  auto parts = [](std::string_view p) {
    std::vector<std::string_view> out;
    for (size_t i = 0; i < p.size();) {
      size_t j = std::min(p.find('/', i), p.size());
      if (j > i) out.push_back(p.substr(i, j - i));
      i = j + 1;
    }
    return out;
  };
  std::string from_dir = parent_of(rel);
  auto from = parts(from_dir), to = parts(target);
  size_t common = 0;
  while (common < from.size() && common < to.size() && from[common] == to[common]) ++common;
  std::string text;
  for (size_t i = common; i < from.size(); ++i) text += "../";
  for (size_t i = common; i < to.size(); ++i) text += std::string(to[i]) + (i + 1 < to.size() ? "/" : "");
  return result(::symlinkat(text.c_str(), dir.fd, leaf.c_str()));
}

int Sandbox::stat(const std::string& rel, struct stat* st, bool follow) const {
  // In its parent, not following the leaf: one system call, as the
  // application's stat was. A symbolic link to follow is resolved beneath
  // the root below.
  if (!rel.empty()) {
    int r = in_parent(rel, [&](int dir, const char* leaf) { return ::fstatat(dir, leaf, st, AT_SYMLINK_NOFOLLOW); });
    if (r < 0 || !follow || !S_ISLNK(st->st_mode)) return r;
  }
  int fd = open(rel, O_PATH | (follow ? 0 : O_NOFOLLOW));
  if (fd < 0) return fd;
  int r = result(::fstat(fd, st));
  ::close(fd);
  return r;
}

int Sandbox::access(const std::string& rel, int mode) const {
  int fd = open(rel, O_PATH);
  if (fd < 0) return fd;
  int r = 0;
  if (mode != F_OK) {
    r = result(::faccessat(fd, "", mode, AT_EMPTY_PATH));
    if (r == -EINVAL) r = 0;  // kernel without faccessat2: existence is what we can check
  }
  ::close(fd);
  return r;
}

int Sandbox::grant_exec(const std::string& rel) const {
  int fd = open(rel, O_RDONLY | O_NONBLOCK);
  if (fd < 0) return fd;
  struct stat st {};
  int r = result(::fstat(fd, &st));
  if (r == 0 && S_ISREG(st.st_mode)) r = result(::fchmod(fd, (st.st_mode & 07777) | 0111));
  ::close(fd);
  return r;
}

int Sandbox::make_dirs(const std::string& rel) const {
  std::string prefix;
  for (const std::string& c : split_components(rel)) {
    if (!prefix.empty()) prefix += '/';
    prefix += c;
    int r = mkdir(prefix, 0755);
    if (r < 0 && r != -EEXIST) return r;
  }
  int fd = open(rel, O_PATH | O_DIRECTORY);  // EEXIST above may have been a file
  if (fd < 0) return fd;
  ::close(fd);
  return 0;
}

int Sandbox::check_contained(const std::string& rel) const {
  for (std::string p = rel;; p = parent_of(p)) {
    int fd = open(p, O_PATH);
    if (fd >= 0) {
      ::close(fd);
      return 0;
    }
    if (fd == -EXDEV || fd == -ELOOP) return fd;
    if (p.empty()) return 0;
  }
}

}  // namespace mpior::replay
