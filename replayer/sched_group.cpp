#include "replayer/sched_group.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>

namespace mpior::replay {
namespace {

bool g_own_session = false;
pid_t g_child = -1;

bool autogroup_on() {
  std::ifstream f("/proc/sys/kernel/sched_autogroup_enabled");
  int on = 0;
  return f >> on && on == 1;
}

void pass_on(int sig) {
  if (g_child > 0) ::kill(g_child, sig);
}

[[noreturn]] void wait_for_child(pid_t child) {
  g_child = child;
  struct sigaction sa {};
  sa.sa_handler = pass_on;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) std::_Exit(128 + WTERMSIG(status));
  std::_Exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

// The kernel's sched_prio_to_weight, nice -20 to 19.
constexpr int kWeights[40] = {88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
                              9548,  7620,  6100,  4904,  3906,  3121,  2501,  1991,  1586,  1277,
                              1024,  820,   655,   526,   423,   335,   272,   215,   172,   137,
                              110,   87,    70,    56,    45,    36,    29,    23,    18,    15};

int nice_for(int ranks) {
  double want = 1024.0 * ranks;
  int best = 20;  // nice 0
  for (int i = 0; i < 40; ++i)
    if (std::abs(kWeights[i] - want) < std::abs(kWeights[best] - want)) best = i;
  return best - 20;
}

std::string read_autogroup() {
  std::ifstream f("/proc/self/autogroup");
  std::string line;
  std::getline(f, line);
  return line;
}

}  // namespace

void enter_own_session() {
  if (!autogroup_on()) return;
  if (::setsid() >= 0 || ::getsid(0) == ::getpid()) {
    g_own_session = true;
    return;
  }
  pid_t parent = ::getpid();
  pid_t child = ::fork();
  if (child < 0) return;  // the replay goes on in its caller's session; weight_session says so
  if (child > 0) wait_for_child(child);
  // Out of the caller's process group, a SIGKILL sent to that group (a
  // budget's) reaches only the parent: the replay goes with it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) std::_Exit(1);
  g_own_session = ::setsid() >= 0;
}

std::string weight_session(int ranks) {
  if (!autogroup_on()) return {};
  if (!g_own_session)
    return fmt::format(
        "warning: the {} rank threads run in the caller's scheduling group (autogroup): on a busy "
        "machine they get less CPU than ranks in sessions of their own; --mpi runs them as ranks",
        ranks);
  int nice = nice_for(ranks);
  if (nice < 0) {
    std::ofstream f("/proc/self/autogroup");
    f << nice;
    f.flush();
    if (!f)
      return fmt::format(
          "warning: the {} rank threads share one scheduling group (autogroup) where the traced "
          "ranks had one each, and raising its weight was refused (CAP_SYS_NICE): on a busy machine "
          "each gets 1/{} of a rank's CPU share; --mpi runs them as ranks",
          ranks, ranks);
  }
  return fmt::format("one scheduling group weighted as {} sessions ({})", ranks, read_autogroup());
}

}  // namespace mpior::replay
