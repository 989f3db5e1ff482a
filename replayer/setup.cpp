#include "replayer/setup.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <set>
#include <unordered_map>

#include "trace/arg_views.hpp"
#include "trace/cursor.hpp"
#include "trace/tool_error.hpp"

namespace mpior::replay {
namespace {

bool is_pseudo(const std::string& traced) { return traced.starts_with('<'); }

// One place below the root for a plan file: a relative path (which the
// tracer should have made absolute) lands below each naming rank's cwd.
struct Placed {
  size_t g;
  std::string rel;
};

std::vector<Placed> place_files(const trace::Plan& plan) {
  std::vector<Placed> out;
  std::vector<std::set<std::string>> cwds(plan.files.size());
  for (const trace::PlanRank& r : plan.ranks)
    for (int32_t g : r.files)
      if (g >= 0 && size_t(g) < cwds.size()) cwds[size_t(g)].insert(r.cwd);
  for (size_t g = 0; g < plan.files.size(); ++g) {
    const std::string& path = plan.files[g].path;
    if (path.starts_with('/') || is_pseudo(path) || cwds[g].empty()) {
      out.push_back({g, map_path(path, "/")});
      continue;
    }
    for (const std::string& cwd : cwds[g]) out.push_back({g, map_path(path, cwd)});
  }
  return out;
}

// Sandbox::check_contained of rel, looking each directory up once for every
// plan file below it: a missing file's answer is its longest existing
// prefix's, which its siblings share (an mdtest plan's setup walked up eleven
// components for each of 12,000 files).
int contained(const Sandbox& box, const std::string& rel, std::unordered_map<std::string, int>& dirs) {
  int fd = box.open(rel, O_PATH);
  if (fd >= 0) ::close(fd);
  if (fd >= 0 || rel.empty()) return 0;
  if (fd == -EXDEV || fd == -ELOOP) return fd;
  std::string parent = parent_of(rel);
  if (auto it = dirs.find(parent); it != dirs.end()) return it->second;
  int r = box.check_contained(parent);
  dirs.emplace(std::move(parent), r);
  return r;
}

void check_contained(const Sandbox& box, const trace::Plan& plan, const std::vector<Placed>& placed) {
  std::unordered_map<std::string, int> dirs;
  for (const Placed& p : placed) {
    int r = contained(box, p.rel, dirs);
    if (r == 0) continue;
    std::string why = r == -EXDEV ? "a symlink there points outside it" : "too many levels of symlinks";
    throw ToolError("plan path " + plan.files[p.g].path + " would leave --fs " + box.root() + " (mapped to " +
                    box.display(p.rel) + "; " + why + ")");
  }
}

// Directories the application made itself, where there was none before:
// setup must not make them, or the replayed mkdir would fail.
std::set<std::string> app_made_dirs(const trace::Plan& plan, const std::vector<Placed>& placed) {
  std::set<std::string> out;
  for (const Placed& p : placed)
    if (plan.files[p.g].directory && plan.files[p.g].created && !plan.files[p.g].existed) out.insert(p.rel);
  return out;
}

void fail_on(int r, const std::string& what, const Sandbox& box, const std::string& rel) {
  if (r < 0) throw ToolError("cannot " + what + " " + box.display(rel) + ": " + std::strerror(-r));
}

void remove_stale(const Sandbox& box, const trace::Plan& plan, const std::vector<Placed>& placed,
                  std::vector<std::string>& warnings) {
  std::vector<std::string> dirs;
  for (const Placed& p : placed) {
    const trace::PlanFile& f = plan.files[p.g];
    if (!f.created || is_pseudo(f.path) || p.rel.empty()) continue;
    if (f.directory && f.existed) continue;  // made again below; its stale entries are listed themselves
    if (f.directory) {
      dirs.push_back(p.rel);
      continue;
    }
    int r = box.unlink(p.rel);
    if (r != -ENOENT && r != -ENOTDIR) fail_on(r, "remove the stale copy", box, p.rel);
  }
  // Deepest first, so nested app-made directories go before their parents.
  std::sort(dirs.begin(), dirs.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const std::string& d : dirs) {
    int r = box.rmdir(d);
    if (r < 0 && r != -ENOENT && r != -ENOTDIR)
      warnings.push_back("kept " + box.display(d) + " (" + std::strerror(-r) +
                         "): the replayed mkdir of it will fail and be counted as an error");
  }
}

// `made`: the directories made so far (thousands of ranks' files share a
// parent; making it again costs a syscall per component).
void make_parents(const Sandbox& box, const std::string& rel, const std::set<std::string>& app_dirs,
                  std::set<std::string>& made) {
  std::vector<std::string> chain;
  for (std::string p = parent_of(rel); !p.empty(); p = parent_of(p)) chain.push_back(p);
  std::string deepest;  // the deepest ancestor above every app-made one
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (app_dirs.count(*it)) break;
    deepest = *it;
  }
  if (deepest.empty() || made.count(deepest)) return;
  fail_on(box.make_dirs(deepest), "create directory", box, deepest);
  made.insert(deepest);
}

// Writes real bytes (not a sparse hole) from the file's end to `size`, so
// replayed reads touch storage as the traced ones did.
void extend_to(const Sandbox& box, const std::string& rel, int64_t size, const IoBuffer& pattern) {
  int fd = box.open(rel, O_WRONLY | O_CREAT, 0644);
  fail_on(fd, "create input file", box, rel);
  off_t at = ::lseek(fd, 0, SEEK_END);
  size_t chunk = std::min<size_t>(pattern.size(), size_t(1) << 20);
  while (at >= 0 && at < size) {
    size_t n = size_t(std::min<int64_t>(int64_t(chunk), size - at));
    ssize_t w = ::pwrite(fd, pattern.data(), n, at);
    if (w <= 0) {
      int e = w < 0 ? errno : ENOSPC;
      ::close(fd);
      fail_on(-e, "write input file", box, rel);
    }
    at += w;
  }
  ::close(fd);
}

// Paths other plan paths lie below: directories, whatever the plan says.
std::set<std::string> ancestors_of_all(const std::vector<Placed>& placed) {
  std::set<std::string> out;
  for (const Placed& pl : placed)
    for (std::string p = parent_of(pl.rel); !p.empty() && out.insert(p).second; p = parent_of(p)) {
    }
  return out;
}

bool below_any(const std::string& rel, const std::set<std::string>& dirs) {
  for (std::string p = parent_of(rel); !p.empty(); p = parent_of(p))
    if (dirs.count(p)) return true;
  return false;
}

// Files the application found there (a call on them succeeded before any
// made them) must exist before the replay: at their traced initial size,
// empty when nothing was read from them; also those it removed and made again
// (`rm -f out.gz; gzip out`). Files it only failed to find, or that only the
// library touched, are left absent, as they were.
void make_inputs(const Sandbox& box, const trace::Plan& plan, const std::vector<Placed>& placed,
                 const std::set<std::string>& app_dirs, const IoBuffer& pattern) {
  std::set<std::string> dirs = ancestors_of_all(placed), made;
  for (const Placed& p : placed) {
    const trace::PlanFile& f = plan.files[p.g];
    if (p.rel.empty()) continue;
    if (f.path == "<stdin>") extend_to(box, p.rel, f.initial_size, pattern);
    if (is_pseudo(f.path)) continue;
    bool directory = f.directory || dirs.count(p.rel);
    // Below a directory the run makes, nothing can have existed before it:
    // another rank made it first (an O_CREAT open that found it), so the
    // replayed run makes it too.
    bool early = !below_any(p.rel, app_dirs);
    bool make_dir = early && directory && f.existed;
    bool make_file = early && !directory && (f.existed || f.initial_size > 0);
    // What setup makes, and what the application creates during the replay,
    // needs its parent directories (those the application does not make).
    if (make_dir || make_file || f.created) make_parents(box, p.rel, app_dirs, made);
    if (make_dir) fail_on(box.make_dirs(p.rel), "create directory", box, p.rel);
    if (make_file) extend_to(box, p.rel, f.initial_size, pattern);
  }
}

std::array<int, 3> open_stdio(const Sandbox& box, bool to_null) {
  std::array<int, 3> fds{};
  fds[0] = box.open("__stdin__", O_RDONLY | O_CREAT, 0644);
  fail_on(fds[0], "create", box, "__stdin__");
  for (int i : {1, 2}) {
    std::string name = i == 1 ? "__stdout__" : "__stderr__";
    fds[size_t(i)] = to_null ? ::open("/dev/null", O_WRONLY | O_CLOEXEC)
                             : box.open(name, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    if (to_null && fds[size_t(i)] < 0) throw ToolError(std::string("cannot open /dev/null: ") + strerror(errno));
    fail_on(fds[size_t(i)], "create", box, name);
  }
  return fds;
}

}  // namespace

IoBuffer::IoBuffer(size_t bytes) : size_(std::max<size_t>(bytes, 4096)) {
  void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw ToolError("cannot reserve a " + std::to_string(size_) + "-byte I/O buffer: " + std::strerror(errno));
  data_ = static_cast<char*>(p);
  // Non-zero data, so compressing or deduplicating file systems store what an
  // application would; beyond the first MiBs, untouched pages stay free.
  size_t filled = std::min<size_t>(size_, size_t(64) << 20);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i + 8 <= filled; i += 8) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    std::memcpy(data_ + i, &x, 8);
  }
}

IoBuffer::~IoBuffer() {
  if (data_) ::munmap(data_, size_);
}

int64_t largest_io_count(const trace::Plan& plan) {
  int64_t best = 0;
  for (const trace::Stream& s : plan.streams)
    for (const trace::Leaf& leaf : s.leaves) {
      trace::OpClass op = trace::info(leaf.kind).op;
      bool mpiio = op == trace::OpClass::mpiio_read || op == trace::OpClass::mpiio_write;
      if (mpiio) best = std::max(best, param_max(s, io_args(leaf).count()));
      bool moves = op == trace::OpClass::read || op == trace::OpClass::write || op == trace::OpClass::asubmit ||
                   op == trace::OpClass::copy || op == trace::OpClass::map;
      if (!trace::is_io(leaf.kind) || !moves) continue;
      best = std::max({best, param_max(s, io_args(leaf).count()), param_max(s, leaf.ret)});
    }
  return best;
}

Target::~Target() {
  for (int fd : stdio_fds)
    if (fd >= 0) ::close(fd);
}

std::unique_ptr<Target> prepare_target(const trace::Plan& plan, const SetupOptions& opt) {
  auto t = std::make_unique<Target>();
  t->sandbox = std::make_unique<Sandbox>(opt.fs, opt.resolver);
  const Sandbox& box = *t->sandbox;
  std::vector<Placed> placed = place_files(plan);
  check_contained(box, plan, placed);  // before anything below DIR changes
  t->mapped.resize(plan.files.size());
  t->relative.resize(plan.files.size());
  for (auto it = placed.rbegin(); it != placed.rend(); ++it) t->mapped[it->g] = it->rel;
  for (size_t g = 0; g < plan.files.size(); ++g)
    t->relative[g] = !plan.files[g].path.starts_with('/') && !is_pseudo(plan.files[g].path);
  t->buffer = std::make_unique<IoBuffer>(size_t(largest_io_count(plan)));
  if (plan.ranks.size() > 1 && plan.ranks.size() * t->buffer->size() <= kOwnBuffersBytes)
    for (size_t r = 0; r < plan.ranks.size(); ++r)
      t->rank_buffers.push_back(std::make_unique<IoBuffer>(t->buffer->size()));
  std::set<std::string> app_dirs = app_made_dirs(plan, placed);
  remove_stale(box, plan, placed, t->warnings);
  make_inputs(box, plan, placed, app_dirs, *t->buffer);
  t->stdio_fds = open_stdio(box, opt.stdio_null);
  raise_file_limit();
  return t;
}

void raise_file_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

}  // namespace mpior::replay
