#include "replayer/mpi_watchdog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "replayer/pacing_clock.hpp"

namespace mpior::replay {

void WaitBoard::add(Slot* s) {
  std::lock_guard lock(mu_);
  slots_.push_back(s);
  running_.fetch_add(1, std::memory_order_relaxed);
}

void WaitBoard::remove(Slot* s) {
  std::lock_guard lock(mu_);
  std::erase(slots_, s);
  running_.fetch_sub(1, std::memory_order_relaxed);
  ticks_.fetch_add(1, std::memory_order_relaxed);
}

std::vector<std::string> WaitBoard::blocked() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const Slot* s : slots_) {
    int32_t k = s->kind.load(std::memory_order_relaxed);
    if (k < 0 || size_t(k) >= trace::kNumKinds) continue;
    out.push_back(fmt::format("{} at event #{} ({})", s->who ? *s->who : std::string("a thread"),
                              s->event_no.load(std::memory_order_relaxed), trace::name(trace::Kind(k))));
  }
  return out;
}

MpiWatchdog::MpiWatchdog(const WaitBoard& board, double stall_s, int me, bool thread_multiple)
    : board_(board), stall_ns_(int64_t(std::llround(std::min(stall_s, 1e9) * 1e9))), me_(me) {
  if (stall_s <= 0 || !thread_multiple) return;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  thread_ = std::thread([this] { run(); });
}

void MpiWatchdog::finish() {
  {
    std::lock_guard lock(mu_);
    done_.store(true, std::memory_order_release);
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

MpiWatchdog::~MpiWatchdog() {
  if (thread_.joinable()) thread_.detach();
}

// One round: this process's state summed over all (a nonblocking reduction
// tested with naps: a waiting watchdog must not spin on a core the replay uses).
bool MpiWatchdog::round(bool out_of_time, int32_t sums[3]) {
  uint64_t ticks = board_.ticks();
  // A round lasts a tenth of the timeout, between 10 ms and 250 ms.
  // Once this process is done, rounds are short: the others' end is near.
  int64_t nap = std::clamp<int64_t>(stall_ns_ / 10, 10'000'000, 250'000'000);
  {
    std::unique_lock lock(mu_);
    if (!done_) wake_.wait_for(lock, std::chrono::nanoseconds(nap), [&] { return done_.load(); });
  }
  if (done_.load(std::memory_order_acquire)) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  // Still replaying here; moving unless every replay thread sat in MPI all
  // round (none yet, or none left: setting up or reporting, not blocked).
  int32_t running = board_.running();
  bool here = !done_.load(std::memory_order_acquire);
  bool moved = running == 0 || board_.in_mpi() < running || board_.ticks() != ticks;
  int32_t mine[3] = {here ? 1 : 0, here && moved ? 1 : 0, out_of_time ? 1 : 0};
  MPI_Request req;
  if (MPI_Iallreduce(mine, sums, 3, MPI_INT32_T, MPI_SUM, comm_, &req) != MPI_SUCCESS) return false;
  for (int flag = 0;;) {
    if (MPI_Test(&req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) return false;
    if (flag) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Each process times the quiet on its own clock, so one can see the timeout
// run out a round before another: it says so in the next round's sums, and
// every watchdog, having the same sums, goes to stalled() in the same round
// (deciding alone, rank 0 waited in stalled()'s gather while the others
// waited in the next round's reduction: a hang, about 1 run in 4 under load).
void MpiWatchdog::run() {
  int64_t quiet_since = mono_now_ns();
  bool out_of_time = false;
  for (;;) {
    int32_t sums[3] = {0, 0, 0};  // unfinished, active, out of time
    if (!round(out_of_time, sums) || sums[0] == 0) return;
    if (sums[2] > 0) stalled();
    int64_t now = mono_now_ns();
    if (sums[1] > 0) quiet_since = now;
    out_of_time = now - quiet_since >= stall_ns_;
  }
}

// Every watchdog got the same sums: all are here. Rank 0 gathers the lists
// and says it once.
void MpiWatchdog::stalled() {
  std::string mine;
  for (const std::string& b : board_.blocked()) mine += (mine.empty() ? "" : "; ") + b;
  int len = int(mine.size()), procs = 1;
  MPI_Comm_size(comm_, &procs);
  std::vector<int> lens(static_cast<size_t>(procs)), at(static_cast<size_t>(procs));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm_);
  int total = 0;
  for (int p = 0; p < procs; ++p) at[size_t(p)] = total, total += lens[size_t(p)];
  std::string all(size_t(std::max(total, 1)), '\0');
  MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), at.data(), MPI_CHAR, 0, comm_);
  if (me_ == 0) {
    std::string list;
    for (int p = 0; p < procs; ++p)
      if (lens[size_t(p)] > 0)
        list += (list.empty() ? "" : "; ") + all.substr(size_t(at[size_t(p)]), size_t(lens[size_t(p)]));
    std::fprintf(stderr,
                 "mpior-replay: replay stalled: no process could proceed for %g s (--stall-timeout): %s (a receive "
                 "with no matching send in the plan, or --stall-timeout too short)\n",
                 double(stall_ns_) / 1e9, list.empty() ? "no thread blocked in MPI" : list.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // rank 0's abort ends this process
}

}  // namespace mpior::replay
