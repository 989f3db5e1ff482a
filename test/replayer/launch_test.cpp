#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdint>
#include <vector>

#include "replayer/start_gate.hpp"
#include "replayer/thread_stacks.hpp"

using namespace mpior::replay;

namespace {

struct Gated {
  StartGate* gate = nullptr;
  std::atomic<uint32_t>* passed = nullptr;
  int64_t t0 = 0;
  uintptr_t stack = 0;  // where the thread's stack starts (its lowest address)
};

void* arrive(void* p) {
  auto* g = static_cast<Gated*>(p);
  pthread_attr_t attr;
  void* addr = nullptr;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
  }
  g->stack = reinterpret_cast<uintptr_t>(addr);
  g->t0 = g->gate->arrive();
  g->passed->fetch_add(1);
  return nullptr;
}

// Recurses past any 64 KiB stack; the volatile buffer keeps each frame.
int deep(int n) {
  volatile char frame[1024];
  frame[0] = char(n);
  return n == 0 ? frame[0] : deep(n - 1) + frame[0];
}

void* overflow(void*) { return reinterpret_cast<void*>(intptr_t(deep(4096))); }

}  // namespace

TEST_CASE("the start gate holds every thread until all arrived, then releases them with one start", "[launch]") {
  constexpr size_t kThreads = 200;
  StartGate gate;
  std::atomic<uint32_t> passed{0};
  ThreadStacks stacks(kThreads, 64 * 1024);
  std::vector<Gated> gated(kThreads);
  std::vector<pthread_t> ids(kThreads);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  for (size_t i = 0; i < kThreads; ++i) {
    gated[i] = {&gate, &passed, 0, 0};
    REQUIRE(stacks.use(attr, i));
    REQUIRE(pthread_create(&ids[i], &attr, arrive, &gated[i]) == 0);
  }
  pthread_attr_destroy(&attr);
  usleep(20'000);
  CHECK(passed.load() == 0);  // nobody passes before the main thread opens
  int64_t t0 = gate.open_when_ready(uint32_t(kThreads), nullptr);
  for (pthread_t id : ids) pthread_join(id, nullptr);
  CHECK(passed.load() == kThreads);
  CHECK(t0 > gate.ready_at());
  std::vector<uintptr_t> starts;
  for (const Gated& g : gated) {
    CHECK(g.t0 == t0);
    starts.push_back(g.stack);
  }
  // Each thread ran on its own stack of the reservation, evenly apart: 64 KiB
  // and a guard page (more under TSan, which needs larger stacks).
  std::sort(starts.begin(), starts.end());
  size_t apart = starts[1] - starts[0];
  CHECK(apart >= 64 * 1024 + size_t(getpagesize()));
  for (size_t i = 1; i < starts.size(); ++i) CHECK(starts[i] - starts[i - 1] == apart);
}

TEST_CASE("the start gate opens at once when every thread arrived before the main thread waits", "[launch]") {
  StartGate gate;
  std::atomic<uint32_t> passed{0};
  Gated g{&gate, &passed, 0, 0};
  pthread_t id;
  REQUIRE(pthread_create(&id, nullptr, arrive, &g) == 0);
  usleep(20'000);  // the thread arrives and waits before expected_ is set
  int64_t t0 = gate.open_when_ready(1, nullptr);
  pthread_join(id, nullptr);
  CHECK(g.t0 == t0);
  CHECK(passed.load() == 1);
}

TEST_CASE("a thread overflowing its reserved stack faults on the guard page", "[launch]") {
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ThreadStacks stacks(4, 64 * 1024);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    // The second stack: an overflow without the guard would write into the first.
    if (!stacks.use(attr, 1)) _exit(2);
    pthread_t id;
    if (pthread_create(&id, &attr, overflow, nullptr) != 0) _exit(3);
    pthread_join(id, nullptr);
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  // Killed by SIGSEGV (or, under a sanitizer, its report's exit status,
  // ASan's 1): not finished (0), nor refused a stack (2) or a thread (3).
  INFO("status " << status);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  CHECK((WIFSIGNALED(status) ? WTERMSIG(status) == SIGSEGV : code != 0 && code != 2 && code != 3));
}
