// Every file-system call of the replay goes through a Sandbox: traced paths
// are mapped below the target directory (--fs), and each path is resolved so
// that nothing — `..`, symlinks, magic links — ever reaches outside it.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace mpior::replay {

// Maps a traced path to a path relative to the target root, lexically normal
// ("" is the root itself). Relative paths resolve against the traced working
// directory; `..` stops at the traced root, as it does on the traced system;
// the stdio pseudo paths become __stdin__, __stdout__, __stderr__.
std::string map_path(std::string_view traced, std::string_view cwd);

// Directory part and last component of a mapped path ("a/b/c" -> "a/b", "c").
std::string parent_of(std::string_view rel);
std::string leaf_of(std::string_view rel);

// Calls return a file descriptor or 0 on success, or -errno. -EXDEV means the
// path would leave the root (a symlink pointing outside it).
class Sandbox {
 public:
  enum class Resolver { automatic, kernel, userspace };

  // Opens (creating if missing) the root directory; throws ToolError with a
  // message naming the directory when it is unusable.
  explicit Sandbox(const std::string& root, Resolver resolver = Resolver::automatic);
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  const std::string& root() const { return root_; }
  // True when openat2(2) RESOLVE_BENEATH does the resolution.
  bool kernel_resolve() const { return kernel_; }
  // root/rel, for messages.
  std::string display(std::string_view rel) const;

  // O_TMPFILE where the file system has none: a fresh name in the directory,
  // unlinked at once (what glibc's tmpfile falls back to).
  int open(const std::string& rel, int flags, mode_t mode = 0) const;
  int mkdir(const std::string& rel, mode_t mode) const;
  int rmdir(const std::string& rel) const;
  int unlink(const std::string& rel) const;
  int rename(const std::string& from, const std::string& to) const;
  int link(const std::string& from, const std::string& to) const;
  // A symbolic link at rel to the file target (both below the root).
  int symlink(const std::string& target, const std::string& rel) const;
  int stat(const std::string& rel, struct stat* st, bool follow = true) const;
  int access(const std::string& rel, int mode) const;
  // Adds the execute bits to the regular file at rel.
  int grant_exec(const std::string& rel) const;
  // mkdir -p of rel (every component a real directory below the root).
  int make_dirs(const std::string& rel) const;
  // 0, or -EXDEV / -ELOOP when the longest existing prefix of rel (the file
  // itself when it exists) resolves outside the root.
  int check_contained(const std::string& rel) const;

 private:
  // A parent directory's descriptor: cached (the sandbox's) or the holder's.
  struct ParentDir {
    int fd = -1;
    bool cached = false;
    std::string rel;
    ParentDir() = default;
    ParentDir(const ParentDir&) = delete;
    ParentDir& operator=(const ParentDir&) = delete;
    ~ParentDir();
  };
  int open_parent(const std::string& rel, std::string* leaf, ParentDir* dir) const;
  void forget_dirs(const std::string& rel, bool below) const;
  template <typename Op>
  int in_parent(const std::string& rel, Op op) const;
  template <typename Op>
  int on_two_paths(const std::string& from, const std::string& to, Op op) const;
  int resolve_user(const std::string& rel, int flags, mode_t mode) const;
  int open_resolved(const std::string& rel, int flags, mode_t mode) const;
  int open_in_parent(const std::string& rel, int flags, mode_t mode) const;
  int open_unnamed(const std::string& dir, int flags, mode_t mode) const;
  int root_fd_ = -1;
  bool kernel_ = false;
  std::string root_;
  uint64_t id_;  // tells this sandbox's cached directories (sandbox.cpp) from an earlier one's
};

}  // namespace mpior::replay
