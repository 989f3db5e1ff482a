// Recording hooks for calls that name files by path relative to a directory
// fd (the *at family), links, renames that keep a file's identity, and
// directory streams (opendir/readdir/closedir, counted on the directory).
#include <mutex>
#include <unordered_map>

#include "preload/fd_table.hpp"
#include "preload/wrapper_support.hpp"
#include "trace/arg_setters.hpp"

namespace mpior::preload {

using namespace trace;

namespace {

// Open directory streams: DIR* -> the directory's file and fd. closedir's
// argument is gone when the hook runs, so the pointer value is the key.
struct DirInfo {
  int fd;
  int32_t file;
};
std::mutex g_dirs_mutex;
std::unordered_map<const void*, DirInfo>* g_dirs = nullptr;  // never freed: exit handlers use it

bool find_dir(const void* d, DirInfo& out, bool remove) {
  std::lock_guard<std::mutex> lk(g_dirs_mutex);
  if (!g_dirs) return false;
  auto it = g_dirs->find(d);
  if (it == g_dirs->end()) return false;
  out = it->second;
  if (remove) g_dirs->erase(it);
  return true;
}

// The directory part of an absolute path ("/a/b" -> "/a").
std::string parent_dir(const std::string& abs) {
  size_t slash = abs.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : abs.substr(0, slash);
}

}  // namespace

// unlinkat: AT_REMOVEDIR makes it an rmdir (flags slot).
void path_flags(Call& c, int64_t ret, int dirfd, const char* path, int64_t flags) noexcept {
  path_op(c, ret, dirfd, path, 0);
  file_args_mut(c.ev()).flags() = flags;
}

void rename_at(Call& c, int64_t ret, int olddir, const char* oldpath, int newdir, const char* newpath,
               int64_t flags) noexcept {
  std::string from = absolute_path(olddir, oldpath), to = absolute_path(newdir, newpath);
  if (from.empty() || to.empty()) return c.drop();
  if (is_excluded(from) && is_excluded(to)) return c.drop_excluded();
  auto& ev = c.ev();
  int32_t a = files().intern(from, -1), b = files().intern(to, -1);
  auto slots = file_args_mut(ev);
  slots.file() = a;
  slots.file2() = b;
  slots.flags() = flags;
  ev.ret = ret;
  c.failed_if(ret < 0);
  // The file keeps its identity: open fds and streams now write under the new
  // name (RENAME_EXCHANGE swaps the two).
  if (ret != 0) return;
  if (flags & RENAME_EXCHANGE) {
    fds().rename_file(a, -3);
    fds().rename_file(b, a);
    fds().rename_file(-3, b);
    streams().rename_file(a, -3);
    streams().rename_file(b, a);
    streams().rename_file(-3, b);
  } else {
    fds().rename_file(a, b);
    streams().rename_file(a, b);
  }
}

// link and symlink: file is the existing file (a symlink's target, resolved
// from the link's directory), file2 the new name; flags kSymlink for symlinks.
void link_at(Call& c, int64_t ret, int olddir, const char* oldpath, int newdir, const char* newpath,
             int64_t flags) noexcept {
  std::string to = absolute_path(newdir, newpath);
  if (to.empty() || is_excluded(to) || !oldpath) return c.drop();
  std::string from = flags == expr::kSymlink && oldpath[0] != '/' ? lexically_normal(parent_dir(to) + "/" + oldpath)
                                                                  : absolute_path(olddir, oldpath);
  auto& ev = c.ev();
  auto a = file_args_mut(ev);
  a.file() = from.empty() ? -1 : files().intern(from, -1);
  a.file2() = files().intern(to, -1);
  a.flags() = flags;
  ev.ret = ret;
  c.failed_if(ret < 0);
}

// opendir (path) and fdopendir (dirfd, no path): handle is the stream's fd.
void dir_open(Call& c, DIR* ret, int dirfd, const char* path) noexcept {
  const AbsolutePath abs(dirfd, path ? path : ".");
  if (abs.empty()) return c.drop();
  if (is_excluded(abs.view())) return c.drop_excluded();
  int32_t file = files().intern(abs.view(), O_RDONLY | O_DIRECTORY);
  auto& ev = c.ev();
  int fd = ret ? ::dirfd(ret) : -1;
  auto a = file_args_mut(ev);
  a.handle() = fd;
  a.file() = file;
  a.flags() = O_RDONLY | O_DIRECTORY;
  a.handle2() = path ? -1 : dirfd;
  ev.ret = ret ? fd : -1;
  c.failed_if(!ret);
  if (!ret) return;
  try {
    std::lock_guard<std::mutex> lk(g_dirs_mutex);
    if (!g_dirs) g_dirs = new std::unordered_map<const void*, DirInfo>();
    (*g_dirs)[ret] = {fd, file};
  } catch (...) {
  }
}

// readdir: ret 1 for an entry, 0 at the end (or an error: errno set).
void dir_use(Call& c, const void*, DIR* dir, bool got) noexcept {
  DirInfo d;
  if (!find_dir(dir, d, false)) return c.drop();
  auto& ev = c.ev();
  auto a = file_args_mut(ev);
  a.handle() = d.fd;
  a.file() = d.file;
  ev.ret = got;
  c.failed_if(!got && c.saved_errno() != 0);
}

void dir_close(Call& c, int64_t ret, DIR* dir) noexcept {
  DirInfo d;
  if (!find_dir(dir, d, true)) return c.drop();
  auto& ev = c.ev();
  auto a = file_args_mut(ev);
  a.handle() = d.fd;
  a.file() = d.file;
  ev.ret = ret;
  c.failed_if(ret != 0);
}

}  // namespace mpior::preload
