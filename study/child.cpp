#include "study/child.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "predict/run.hpp"
#include "trace/tool_error.hpp"

namespace mpior::study {

namespace {

// The leader has exited (not reaped: while it is a zombie the group id
// cannot be reused, so signalling the group stays safe).
bool exited(pid_t pid) {
  siginfo_t info{};
  if (waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return errno != EINTR;
  return info.si_pid == pid;
}

// Reads what the pipe holds now; false at its end.
bool read_some(int fd, std::string& to) {
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      to.append(buf, size_t(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && errno == EAGAIN;
  }
}

// SIGTERM to the group, SIGKILL after `grace_s` if the leader is still there.
void stop_group(pid_t pid, double grace_s) {
  kill(-pid, SIGTERM);
  double until = steady_s() + grace_s;
  while (!exited(pid) && steady_s() < until) usleep(20000);
  kill(-pid, SIGKILL);
}

pid_t start(const std::vector<std::string>& argv, int err_fd) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) throw ToolError(fmt::format("cannot run {}: {}", argv[0], std::strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(err_fd, 2);
    execvp(args[0], args.data());
    _exit(127);
  }
  setpgid(pid, pid);
  return pid;
}

}  // namespace

double steady_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

ChildResult run_child(const std::vector<std::string>& argv, double deadline_s, double grace_s) {
  predict::check_interrupt();
  int err[2];
  if (pipe2(err, O_CLOEXEC) != 0) throw ToolError(fmt::format("cannot run {}: {}", argv[0], std::strerror(errno)));
  pid_t pid = start(argv, err[1]);
  close(err[1]);
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  ChildResult r;
  bool open = true, interrupted = false;
  while (!exited(pid)) {
    try {
      predict::check_interrupt();
    } catch (const predict::Interrupted&) {
      interrupted = true;
    }
    if (interrupted || (deadline_s > 0 && steady_s() >= deadline_s)) {
      r.stopped = !interrupted;
      stop_group(pid, grace_s);
      break;
    }
    // Short waits: the deadline and an interrupt are seen within 100 ms.
    int wait_ms = deadline_s > 0 ? int(std::clamp((deadline_s - steady_s()) * 1000, 1.0, 100.0)) : 100;
    pollfd p{err[0], POLLIN, 0};
    if (poll(&p, open ? 1 : 0, wait_ms) > 0) open = read_some(err[0], r.err);
  }
  if (open) read_some(err[0], r.err);
  close(err[0]);
  kill(-pid, SIGKILL);  // whatever of the group outlived its leader
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  predict::check_interrupt();
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  if (r.status == 127 && !r.stopped)
    throw ToolError(fmt::format("cannot run {}: not found (is it installed?)", argv[0]));
  return r;
}

}  // namespace mpior::study
