#include "preload/fd_table.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "preload/cwd_cache.hpp"
#include "preload/journal.hpp"
#include "preload/real_table.hpp"
#include "preload/thread_state.hpp"

namespace mpior::preload {
namespace {

// MPIOR_EXCLUDE, parsed once into a trie of its prefixes' characters after
// the leading '/' (CharTrie), then path-compressed (Excluded): is_excluded
// runs on every path call and reads a path's characters once, whatever the
// number of prefixes (the default list holds several under /dev, which a
// path kept under /dev/shm passes every time), comparing a run of them per
// node rather than looking up a node per character.
struct CharTrie {
  struct Node {
    uint32_t child = 0;    // first child, 0 for none (node 0, "/", is no one's child)
    uint32_t sibling = 0;  // the parent's next child
    char c = 0;
    // The prefix that ends here, held as whole components (whole) or as
    // PREFIX* (star): 0 for none, else 1 + its rank in the list (of two
    // equal prefixes the later decides).
    uint32_t whole = 0, star = 0;
  };
  std::vector<Node> nodes = std::vector<Node>(1);
  uint32_t add_child(uint32_t at, char c) {
    uint32_t k = nodes[at].child;
    while (k != 0 && nodes[k].c != c) k = nodes[k].sibling;
    if (k != 0) return k;
    k = uint32_t(nodes.size());
    Node n;
    n.c = c;
    n.sibling = nodes[at].child;
    nodes[at].child = k;
    nodes.push_back(n);
    return k;
  }
};

struct Excluded {
  // A run of characters no prefix ends inside and no other branches off.
  struct Node {
    uint32_t kids = 0;             // its children by next character: kids[kids, kids + 256); 0 for none
    uint32_t whole = 0, star = 0;  // the prefix ending at the run's last character
    uint32_t label = 0;            // the run: labels[label, label + len)
    uint32_t len = 0;
  };
  std::vector<Node> nodes = std::vector<Node>(1);  // node 0: "/", no one's child (0 in kids: none)
  std::vector<uint32_t> kids;                      // 256 a node with children, the root's first
  std::string labels;
  std::vector<uint8_t> keep;  // by rank - 1: a '!' prefix

  explicit Excluded(const CharTrie& t) {
    nodes[0].whole = t.nodes[0].whole;
    nodes[0].star = t.nodes[0].star;
    add_kids(t, 0, 0);
  }
  // The children of CharTrie node k as those of node at.
  void add_kids(const CharTrie& t, uint32_t k, uint32_t at) {
    if (t.nodes[k].child == 0) return;
    const uint32_t table = uint32_t(kids.size());
    kids.resize(kids.size() + 256);
    nodes[at].kids = table;
    for (uint32_t c = t.nodes[k].child; c != 0; c = t.nodes[c].sibling) {
      const uint32_t child = add(t, c);
      kids[table + uint8_t(t.nodes[c].c)] = child;
    }
  }
  // The run starting at CharTrie node k and its subtree; its index.
  uint32_t add(const CharTrie& t, uint32_t k) {
    Node n;
    n.label = uint32_t(labels.size());
    labels += t.nodes[k].c;
    for (;;) {
      const CharTrie::Node& c = t.nodes[k];
      if (c.whole != 0 || c.star != 0 || c.child == 0 || t.nodes[c.child].sibling != 0) break;
      k = c.child;
      labels += t.nodes[k].c;
    }
    n.len = uint32_t(labels.size()) - n.label;
    n.whole = t.nodes[k].whole;
    n.star = t.nodes[k].star;
    const uint32_t at = uint32_t(nodes.size());
    nodes.push_back(n);
    add_kids(t, k, at);
    return at;
  }
};
Excluded* g_excluded = nullptr;

std::string fd_path(int fd) {
  char link[64], buf[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, buf, sizeof buf - 1);
  if (n <= 0) return {};
  return std::string(buf, size_t(n));
}

}  // namespace

// ---- file table -------------------------------------------------------------

namespace {
// The path this thread interned last: a program names one file again and
// again (stat, open and close in a loop), and comparing it here spares the
// table's lock and hash lookup. An entry's path never changes and stays
// where it is (a deque); its flags change once, under the lock, from
// unknown (< 0) to known, so a call that would set them takes the lock
// unless they were known when this was noted.
struct LastPath {
  uint64_t table = 0;  // FileTable::serial_, 0 for none
  const std::string* path = nullptr;
  int32_t id = -1;
  bool flags_known = false;
};
constinit thread_local LastPath t_last_path __attribute__((tls_model("initial-exec")));
std::atomic<uint64_t> g_table_serial{0};
}  // namespace

FileTable::FileTable() : serial_(g_table_serial.fetch_add(1, std::memory_order_relaxed) + 1) {}

int32_t FileTable::intern(std::string_view path, int64_t flags) {
  LastPath& last = t_last_path;
  if (last.table == serial_ && (flags < 0 || last.flags_known) && *last.path == path) return last.id;
  std::lock_guard<std::mutex> lk(mutex_);
  auto it = index_.find(path);
  int32_t id = 0;
  if (it != index_.end()) {
    id = it->second;
    if (entries_[size_t(id)].flags < 0) entries_[size_t(id)].flags = flags;
  } else {
    id = int32_t(entries_.size());
    entries_.push_back({std::string(path), flags});
    journal::note_file(id, entries_.back());
    index_.emplace(entries_.back().path, id);
  }
  const trace::FileEntry& e = entries_[size_t(id)];
  last = {serial_, &e.path, id, e.flags >= 0};
  return id;
}

std::string FileTable::path(int32_t index) {
  std::lock_guard<std::mutex> lk(mutex_);
  return index >= 0 && size_t(index) < entries_.size() ? entries_[size_t(index)].path : std::string();
}

std::vector<trace::FileEntry> FileTable::entries() {
  std::lock_guard<std::mutex> lk(mutex_);
  return {entries_.begin(), entries_.end()};
}

// ---- fds --------------------------------------------------------------------

FdTable::Slot* FdTable::classify(int fd) {
  took_slow_path();
  Slot& s = slots_[fd];
  if (s.file.load(std::memory_order_relaxed) == kFdNotTraced) return nullptr;
  // First use of an fd the tracer did not see opened (inherited, or opened
  // by an untraced path inside a library): regular files are traced.
  struct stat st;
  int32_t file = kFdNotTraced;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    std::string p = fd_path(fd);
    if (!p.empty() && p[0] == '/' && !is_excluded(p)) file = files().intern(p, -1);
  }
  s.file.store(file, std::memory_order_relaxed);
  if (file < 0) return nullptr;
  note(fd);
  s.pos.store(lseek(fd, 0, SEEK_CUR), std::memory_order_relaxed);
  return &s;
}

void FdTable::note(int fd) {
  int high = high_.load(std::memory_order_relaxed);
  while (fd >= high && !high_.compare_exchange_weak(high, fd + 1, std::memory_order_relaxed)) {
  }
}

void FdTable::set(int fd, int32_t file, int64_t pos) {
  if (fd < 0 || fd >= kMaxFd) return;
  if (file >= 0) note(fd);
  slots_[fd].pos.store(pos, std::memory_order_relaxed);
  slots_[fd].file.store(file, std::memory_order_relaxed);
}

void FdTable::forget(int fd) {
  if (fd >= 0 && fd < kMaxFd) slots_[fd].file.store(kFdUnknown, std::memory_order_relaxed);
}

void FdTable::copy(int from, int to) {
  if (from < 0 || from >= kMaxFd || to < 0 || to >= kMaxFd) return;
  set(to, slots_[from].file.load(std::memory_order_relaxed), slots_[from].pos.load(std::memory_order_relaxed));
}

void FdTable::rename_file(int32_t from, int32_t to) {
  int high = high_.load(std::memory_order_relaxed);
  for (int fd = 0; fd < high; ++fd) {
    int32_t f = from;
    slots_[fd].file.compare_exchange_strong(f, to, std::memory_order_relaxed);
  }
}

int32_t FdTable::file_of(int fd) {
  Slot* s = traced(fd);
  return s ? s->file.load(std::memory_order_relaxed) : kFdNotTraced;
}

// ---- streams ----------------------------------------------------------------

StreamTable::Entry* StreamTable::find(FILE* f) {
  size_t h = home(f);
  for (size_t i = 0; i < kSlots; ++i) {
    Entry& e = slots_[(h + i) % kSlots];
    FILE* k = e.key.load(std::memory_order_acquire);
    if (k == f) return &e;
    if (k == nullptr) return nullptr;
  }
  return nullptr;
}

StreamTable::Entry* StreamTable::traced_probe(FILE* f) {
  if (!f) return nullptr;
  Entry* e = find(f);
  if (__builtin_expect(e != nullptr, 1)) return e->file >= 0 ? e : nullptr;
  // A stream the tracer did not see opened (popen, fmemopen, opened before
  // load): traced when its fd is a traced file; remembered either way.
  took_slow_path();
  int fd = fileno(f);
  FdTable::Slot* slot = fd >= 0 ? fds().traced(fd) : nullptr;
  if (!slot) {
    add_with_id(f, -1, -1, fd);
    return nullptr;
  }
  return add(f, slot->file.load(), fd, slot->pos.load());
}

StreamTable::Entry* StreamTable::add(FILE* f, int32_t file, int fd, int64_t pos) {
  Entry* e = add_with_id(f, next_id_.fetch_add(1), file, fd);
  if (e) e->pos.store(pos);
  return e;
}

StreamTable::Entry* StreamTable::add_with_id(FILE* f, int32_t id, int32_t file, int fd) {
  std::lock_guard<std::mutex> lk(mutex_);
  size_t h = home(f);
  const FILE* tomb = reinterpret_cast<FILE*>(uintptr_t(1));
  for (size_t i = 0; i < kSlots; ++i) {
    Entry& e = slots_[(h + i) % kSlots];
    FILE* k = e.key.load(std::memory_order_relaxed);
    if (k == nullptr || k == tomb || k == f) {
      if (k == nullptr) used_[used_count_++] = uint16_t((h + i) % kSlots);
      e.id = id;
      e.file = file;
      e.fd = fd;
      e.pos.store(0);
      e.key.store(f, std::memory_order_release);
      return &e;
    }
  }
  return nullptr;  // more than kSlots streams open at once: the rest go untraced
}

void StreamTable::rename_file(int32_t from, int32_t to) {
  std::lock_guard<std::mutex> lk(mutex_);
  const FILE* tomb = reinterpret_cast<FILE*>(uintptr_t(1));
  for (size_t i = 0; i < used_count_; ++i) {
    Entry& e = slots_[used_[i]];
    const FILE* k = e.key.load(std::memory_order_relaxed);
    if (k != nullptr && k != tomb && e.file == from) e.file = to;
  }
}

void StreamTable::remove(FILE* f) {
  std::lock_guard<std::mutex> lk(mutex_);
  if (Entry* e = find(f)) e->key.store(reinterpret_cast<FILE*>(uintptr_t(1)), std::memory_order_release);
}

// ---- paths ------------------------------------------------------------------

namespace {
// Already in the form lexically_normal gives: absolute, no empty, "." or
// ".." component, no trailing '/'. Most paths a program names are.
bool is_normal(std::string_view path) {
  if (path.empty() || path[0] != '/') return false;
  const char* const end = path.data() + path.size();
  // From one '/' to the next (memchr: a path has few of them, and this runs
  // on every path call): the component after each must be a name.
  for (const char* slash = path.data(); slash;) {
    const char* c = slash + 1;
    if (c == end) return path.size() == 1;
    if (*c == '/') return false;
    if (*c == '.' && (c + 1 == end || c[1] == '/' || (c[1] == '.' && (c + 2 == end || c[2] == '/')))) return false;
    slash = static_cast<const char*>(memchr(c, '/', size_t(end - c)));
  }
  return true;
}
}  // namespace

std::string lexically_normal(std::string_view path) {
  if (is_normal(path)) return std::string(path);
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view part = path.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  std::string out;
  out.reserve(path.size());
  for (auto p : parts) {
    out += '/';
    out += p;
  }
  return out.empty() ? "/" : out;
}

std::string absolute_path(int dirfd, const char* path) {
  if (!path) return {};
  if (path[0] == '/') return lexically_normal(path);
  std::string joined;
  if (dirfd == AT_FDCWD) {
    joined.reserve(256);
    cwd::append_to(joined);
  } else {
    joined = fd_path(dirfd);
  }
  joined += '/';
  joined += path;
  if (is_normal(joined)) return joined;  // moved out, not copied as a conditional expression would
  return lexically_normal(joined);
}

namespace {
// is_normal for a C string, finding its end on the way (no strlen before
// it): the length of a normal path, 0 for any other.
size_t normal_length(const char* path) {
  if (path[0] != '/') return 0;
  if (path[1] == '\0') return 1;
  for (const char* c = path + 1;;) {
    if (*c == '/' || *c == '\0') return 0;  // an empty component, a trailing '/'
    if (*c == '.' && (c[1] == '/' || c[1] == '\0' || (c[1] == '.' && (c[2] == '/' || c[2] == '\0')))) return 0;
    const char* slash = strchrnul(c, '/');
    if (*slash == '\0') return size_t(slash - path);
    c = slash + 1;
  }
}
}  // namespace

AbsolutePath::AbsolutePath(int dirfd, const char* path) {
  if (path) {
    if (const size_t n = normal_length(path)) {
      view_ = std::string_view(path, n);
      return;
    }
  }
  built_ = absolute_path(dirfd, path);
  view_ = built_;
}

void set_excluded(std::vector<std::string> prefixes) {
  CharTrie t;
  std::vector<uint8_t> keep;
  for (const std::string& p : prefixes) {
    const bool kept = p.starts_with('!'), star = p.ends_with('*') && p.size() > size_t(kept);
    const std::string text = lexically_normal(p.substr(kept ? 1 : 0, p.size() - (kept ? 1 : 0) - (star ? 1 : 0)));
    uint32_t at = 0;
    for (size_t i = 1; i < text.size(); ++i) at = t.add_child(at, text[i]);
    keep.push_back(kept);
    // Listed twice (the default list, then MPIOR_EXCLUDE holding it too): the later decides.
    (star ? t.nodes[at].star : t.nodes[at].whole) = uint32_t(keep.size());
  }
  auto* ex = new Excluded(t);
  ex->keep = std::move(keep);
  // Set once at load; a later call (tests) replaces the list. Never freed
  // otherwise: calls made from exit handlers still read it.
  delete std::exchange(g_excluded, ex);
}

// The longest prefix that holds p decides: "!/dev/shm" keeps what "/dev"
// would exclude; "!/proc" after the default "/proc" keeps /proc. A prefix ending in '*' holds any path that starts with
// the text before it ("/dev/shm/mpich_shar_tmp*"); others hold whole components; "/" holds every path.
bool is_excluded(std::string_view p) {
  const Excluded* ex = g_excluded;
  if (!ex) return false;
  uint32_t rank = std::max(ex->nodes[0].whole, ex->nodes[0].star);
  const size_t size = p.size();
  if (size > 1 && p[0] == '/' && !ex->kids.empty()) {
    const char* const labels = ex->labels.data();
    const uint32_t* const kids = ex->kids.data();
    size_t i = 1;
    for (uint32_t at = kids[uint8_t(p[1])]; at != 0;) {
      const Excluded::Node& n = ex->nodes[at];
      if (n.len > size - i) break;
      const char* run = labels + n.label;
      for (uint32_t j = 1; j < n.len; ++j)  // run[0] chose this node
        if (run[j] != p[i + j]) return rank != 0 && !ex->keep[rank - 1];
      i += n.len;
      uint32_t here = n.star;
      if (n.whole != 0 && (i == size || p[i] == '/')) here = std::max(here, n.whole);
      if (here != 0) rank = here;
      if (i == size || n.kids == 0) break;
      at = kids[n.kids + uint8_t(p[i])];
    }
  }
  return rank != 0 && !ex->keep[rank - 1];
}

int64_t flags_of_mode(const char* mode) {
  if (!mode) return 0;
  bool plus = false;
  int64_t extra = 0;
  for (const char* m = mode + 1; *m; ++m) {
    if (*m == '+') plus = true;
    if (*m == 'x') extra |= O_EXCL;
    if (*m == 'e') extra |= O_CLOEXEC;
  }
  switch (mode[0]) {
    case 'r':
      return (plus ? O_RDWR : O_RDONLY) | extra;
    case 'w':
      return (plus ? O_RDWR : O_WRONLY) | O_CREAT | O_TRUNC | extra;
    case 'a':
      return (plus ? O_RDWR : O_WRONLY) | O_CREAT | O_APPEND | extra;
    default:
      return extra;
  }
}

FileTable& files() {
  static auto* t = new FileTable();
  return *t;
}
FdTable& make_fds() {
  static auto* t = new FdTable();
  g_fds.store(t, std::memory_order_release);
  return *t;
}
StreamTable& make_streams() {
  static auto* t = new StreamTable();
  g_streams.store(t, std::memory_order_release);
  return *t;
}

namespace {
// The regular file behind fd 0-2 when a shell redirected it (`cat a > b`),
// else empty.
std::string file_behind(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return {};
  char link[32], buf[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, buf, sizeof buf - 1);
  return n > 0 && buf[0] == '/' ? std::string(buf, size_t(n)) : std::string();
}
}  // namespace

void register_std_streams() {
  const char* names[3] = {"<stdin>", "<stdout>", "<stderr>"};
  FILE* std_streams[3] = {stdin, stdout, stderr};
  int32_t std_files[3];
  for (int i = 0; i < 3; ++i) std_files[i] = files().intern(names[i], -1);  // ids 0-2, always
  for (int i = 0; i < 3; ++i) {
    std::string real = file_behind(i);
    int32_t f = real.empty() ? std_files[i] : files().intern(real, fcntl(i, F_GETFL));
    off_t pos = real.empty() ? 0 : lseek(i, 0, SEEK_CUR);
    fds().set(i, f, pos < 0 ? 0 : pos);
    streams().add_with_id(std_streams[i], i, f, i);
  }
}

}  // namespace mpior::preload
