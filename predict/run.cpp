#include "predict/run.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace fs = std::filesystem;

namespace mpior::predict {

namespace {

volatile sig_atomic_t g_signal = 0;
volatile pid_t g_child = 0;

void on_signal(int sig) {
  g_signal = sig;
  pid_t c = g_child;
  if (c > 0) kill(-c, SIGTERM);  // the child's process group
}

// Reads both pipes to their ends.
void drain(int out_fd, int err_fd, Output& o) {
  pollfd p[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* to[2] = {&o.out, &o.err};
  int open = 2;
  char buf[65536];
  while (open > 0) {
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(p[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        to[i]->append(buf, size_t(n));
        continue;
      }
      p[i].fd = -1;
      --open;
    }
  }
}

}  // namespace

void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

void check_interrupt() {
  if (g_signal) throw Interrupted(g_signal);
}

Output run_process(const std::vector<std::string>& argv, const std::string& cwd, const std::vector<std::string>& env) {
  check_interrupt();
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
    throw ToolError(fmt::format("cannot run {}: {}", argv[0], std::strerror(errno)));
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) throw ToolError(fmt::format("cannot run {}: {}", argv[0], std::strerror(errno)));
  if (pid == 0) {  // the child: its own process group, so a signal to us stops all of it
    setpgid(0, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    if (chdir(cwd.c_str()) != 0) _exit(126);
    for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
    execvp(args[0], args.data());
    _exit(127);
  }
  setpgid(pid, pid);
  g_child = pid;
  if (g_signal) kill(-pid, SIGTERM);
  close(out[1]);
  close(err[1]);
  Output o;
  drain(out[0], err[0], o);
  close(out[0]);
  close(err[0]);
  int st = 0;
  struct rusage use {};
  while (wait4(pid, &st, 0, &use) < 0 && errno == EINTR) {
  }
  o.sleeps = use.ru_nvcsw;
  g_child = 0;
  check_interrupt();
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  if (o.status == 127) throw ToolError(fmt::format("cannot run {}: not found (is it installed?)", argv[0]));
  return o;
}

void check_directory(const std::string& role, const std::string& dir, int64_t need) {
  std::error_code ec;
  auto st = fs::status(dir, ec);
  if (ec || !fs::exists(st)) throw ToolError(fmt::format("{} {}: no such directory", role, dir));
  if (!fs::is_directory(st)) throw ToolError(fmt::format("{} {}: not a directory", role, dir));
  std::string probe = (fs::path(dir) / ".mpior-predict-probe").string();  // also read-only mounts, for root
  if (access(dir.c_str(), W_OK | X_OK) != 0 || mkdir(probe.c_str(), 0700) != 0)
    throw ToolError(fmt::format("{} {}: not writable ({})", role, dir, std::strerror(errno)));
  rmdir(probe.c_str());
  if (!fs::is_empty(dir, ec) || ec)
    throw ToolError(fmt::format("{} {}: not empty (the jobs need an empty directory of their own)", role, dir));
  struct statvfs v {};
  if (statvfs(dir.c_str(), &v) != 0)
    throw ToolError(fmt::format("{} {}: cannot read free space ({})", role, dir, std::strerror(errno)));
  int64_t avail = int64_t(v.f_bavail) * int64_t(v.f_frsize);
  if (avail < need)
    throw ToolError(fmt::format("{} {}: {} bytes free, the jobs need {} bytes", role, dir, avail, need));
}

Scratch::Scratch(const std::string& dir) : path_((fs::path(dir) / "mpior-predict-run").string()) {
  if (int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); fd >= 0) {
    syncfs(fd);
    close(fd);
  }
  std::error_code ec;
  fs::remove_all(path_, ec);
  if (!fs::create_directory(path_, ec) || ec)
    throw ToolError(fmt::format("cannot make {}: {}", path_, ec ? ec.message() : "exists"));
}

Scratch::~Scratch() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace mpior::predict
