#include "replayer/sync.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>

#include "replayer/futex.hpp"
#include "replayer/pacing_clock.hpp"

namespace mpior::replay {

Progress::Progress(uint32_t threads, double stall_timeout_s)
    : busy_(int64_t(threads)), stall_ns_(int64_t(std::llround(stall_timeout_s * 1e9))) {}

void Progress::enter_wait(const std::string& who, const std::string& what) {
  {
    std::lock_guard lock(mu_);
    waiting_[std::this_thread::get_id()] = who + " waits on " + what;
  }
  enter_wait();
}

void Progress::leave_wait(bool named) {
  if (named) {
    std::lock_guard lock(mu_);
    waiting_.erase(std::this_thread::get_id());
  }
  leave_wait();
}

void Progress::abort(const std::string& why, bool list_blocked) {
  std::function<void()> wake;
  {
    std::lock_guard lock(mu_);
    if (aborted_.load()) return;
    reason_ = why;
    if (list_blocked && !waiting_.empty()) {
      constexpr size_t kShown = 16;
      std::vector<std::string> lines;
      for (const auto& [id, what] : waiting_) lines.push_back(what);
      std::sort(lines.begin(), lines.end());
      reason_ += "; blocked threads (" + std::to_string(lines.size()) + "):";
      for (size_t i = 0; i < lines.size() && i < kShown; ++i) reason_ += "\n  " + lines[i];
      if (lines.size() > kShown) reason_ += "\n  ...";
    }
    aborted_.store(true);
    wake = waker_;
  }
  if (wake) wake();
}

std::string Progress::reason() const {
  std::lock_guard lock(mu_);
  return reason_;
}

std::string describe(const ChannelKey& k) {
  std::string what = k.tag == kTagDown ? "root-to-member" : k.tag == kTagUp ? "member-to-root" : "";
  std::string s = "channel global comm " + std::to_string(k.comm) + " src " + std::to_string(k.src) + " -> dst " +
                  std::to_string(k.dst);
  return what.empty() ? s + " tag " + std::to_string(k.tag) : s + " (" + what + " collective)";
}

size_t Channels::Hash::operator()(const ChannelKey& k) const {
  uint64_t h = uint64_t(uint32_t(k.comm)) * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t(uint32_t(k.src)) << 32 | uint32_t(k.dst)) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
  h ^= uint64_t(k.tag) * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
  return size_t(h ^ (h >> 29));
}

Channels::~Channels() {
  for (Shard& s : shards_)
    for (auto& [key, ch] : s.sems) sem_destroy(&ch.sem);
}

size_t Progress::tick_slot() {
  static std::atomic<size_t> next{0};
  thread_local size_t slot = next.fetch_add(1, std::memory_order_relaxed) % kTickSlots;
  return slot;
}

namespace {
std::atomic<uint64_t> g_channels_made{0};
thread_local int64_t t_released_ns = 0;
thread_local bool t_slept = false;
thread_local int64_t t_lateness_ns = 0;
thread_local int64_t t_lateness_since = 0;
thread_local bool t_synced = false;

// Leaving a synchronisation released at `actual`, when the plan's timeline released it at `planned`.
void released_late(int64_t actual, int64_t planned) {
  t_lateness_ns = std::max<int64_t>(0, actual - planned);
  t_synced = true;
}

// A thread's recently used channels: direct-mapped by the key's hash.
struct CachedChannel {
  uint64_t owner = 0;  // Channels::id_; 0: empty
  ChannelKey key;
  void* channel = nullptr;  // Channels::Channel*
};
constexpr size_t kCachedChannels = 16;
thread_local std::array<CachedChannel, kCachedChannels> t_channels;
}  // namespace

Channels::Channels(Progress& progress, uint32_t threads)
    : id_(g_channels_made.fetch_add(1, std::memory_order_relaxed) + 1), progress_(progress), threads_(threads) {}

Channels::Channel* Channels::get(const ChannelKey& k) {
  size_t h = Hash{}(k);
  CachedChannel& c = t_channels[(h >> 8) % kCachedChannels];
  if (c.owner == id_ && c.key == k) return static_cast<Channel*>(c.channel);
  c = {id_, k, get_shared(k)};
  return static_cast<Channel*>(c.channel);
}

Channels::Channel* Channels::get_shared(const ChannelKey& k) {
  Shard& s = shards_[Hash{}(k) % kShards];
  std::lock_guard lock(s.mu);
  auto [it, inserted] = s.sems.try_emplace(k);
  // A channel made after an abort starts open, like the ones wake_all opened.
  if (inserted) sem_init(&it->second.sem, 0, progress_.is_aborted() ? threads_ : 0);
  return &it->second;
}

void Channels::post(const ChannelKey& k) {
  Channel* ch = get(k);
  int64_t now = mono_now_ns();
  ch->posted_ns.store(now, std::memory_order_relaxed);  // published by sem_post
  ch->planned_ns.store(now - t_lateness_ns, std::memory_order_relaxed);
  sem_post(&ch->sem);
  progress_.tick();
}

namespace {
// Polls `ready` as MPICH's ch4 progress loop polls, never yielding the core
// (its MPIR_CVAR_POLLS_BEFORE_YIELD is ch3's), for `spin_ns` at most: a
// waiter that sleeps instead wakes a scheduler tick late when the machine is
// busy (often more than a whole barrier-bound step), time no gap pays back.
// A thread woken on a poller's core (a partner's fsync ending, a compute
// sleep's timer) waits there for the scheduler to move it, in the program as
// in its replay; a replay that yielded now and then would let it run at once
// and predict a slower file system short. The pause between polls leaves a
// hyperthread sibling the core's pipeline.
template <class Ready>
bool poll_until(Ready&& ready, int64_t spin_ns) {
  if (spin_ns <= 0) return false;
  int64_t until = mono_now_ns() + spin_ns;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (mono_now_ns() >= until) return false;
  }
}

// Drives until the message is there (true), the replay aborted (true: the
// caller sees it) or driving is no longer worth it (false).
template <class Ready>
bool drive_until(Ready&& ready, const std::function<bool()>& drive, const Progress& progress) {
  for (uint32_t polls = 0; drive(); ++polls) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (progress.is_aborted()) return true;
    if (polls > 1000) sched_yield();  // as MPICH's own progress loop (PollBackoff)
  }
  return false;
}
}  // namespace

WaitResult Channels::wait(const ChannelKey& k, Who who, const std::function<bool()>* drive) {
  if (progress_.is_aborted()) return WaitResult::aborted;
  Channel* ch = get(k);
  sem_t* sem = &ch->sem;
  const int64_t entry = mono_now_ns();
  // Released when the message came, or at the entry when it was there first.
  auto released = [&] {
    t_released_ns = std::max(entry, ch->posted_ns.load(std::memory_order_relaxed));
    released_late(t_released_ns, std::max(entry - t_lateness_ns, ch->planned_ns.load(std::memory_order_relaxed)));
  };
  // Reading the count first: a failed sem_trywait would take the line from the poster.
  auto posted = [sem] {
    int n = 0;
    return sem_getvalue(sem, &n) == 0 && n > 0 && sem_trywait(sem) == 0;
  };
  uint32_t polls = 0;
  auto posted_or_drive = [&] {
    if (posted()) return true;
    if (drive && (++polls & 15) == 0) (*drive)();
    return false;
  };
  if (sem_trywait(sem) == 0 || poll_until(posted_or_drive, poll_ns(threads_)) ||
      (drive && drive_until(posted, *drive, progress_))) {
    progress_.tick();
    released();
    return progress_.is_aborted() ? WaitResult::aborted : WaitResult::ok;
  }
  t_slept = true;
  progress_.enter_wait(who.str(), describe(k));
  uint64_t seen = progress_.ticks();
  int64_t deadline = mono_now_ns() + progress_.stall_timeout_ns();
  for (;;) {
    timespec ts{time_t(deadline / 1'000'000'000), long(deadline % 1'000'000'000)};
    if (sem_clockwait(sem, CLOCK_MONOTONIC, &ts) == 0) break;
    if (errno == EINTR) continue;
    if (progress_.is_aborted()) break;
    if (!progress_.stalled(seen)) {
      seen = progress_.ticks();
      deadline = mono_now_ns() + progress_.stall_timeout_ns();
      continue;
    }
    progress_.abort(fmt::format("replay stalled: {} waited {:g} s on {} while no thread could proceed (a receive "
                                "with no matching send in the plan, or --stall-timeout too short)",
                                who.str(), double(progress_.stall_timeout_ns()) / 1e9, describe(k)),
                    true);
    progress_.leave_wait(true);
    return WaitResult::stalled;
  }
  progress_.leave_wait(true);
  released();
  return progress_.is_aborted() ? WaitResult::aborted : WaitResult::ok;
}

void Channels::wake_all() {
  for (Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    for (auto& [key, ch] : s.sems)
      for (uint32_t i = 0; i < threads_; ++i) sem_post(&ch.sem);
  }
}

void set_lateness(int64_t ns, int64_t since) { t_lateness_ns = ns, t_lateness_since = since, t_synced = false; }
int64_t lateness_after_sync() { return t_synced ? t_lateness_ns : -1; }
int64_t lateness_held() { return t_lateness_ns; }
void lateness_changed(int64_t ns) { t_lateness_ns = std::max<int64_t>(0, t_lateness_ns + ns), t_synced = true; }
int64_t current_lateness(int64_t now) {
  return t_lateness_ns + (t_lateness_since > 0 ? std::max<int64_t>(0, now - t_lateness_since) : 0);
}
// The lateness holds from now on: a second receive in the same call (a
// Waitall's, a root's from each member) starts from it, not from the step.
void lateness_agreed(int64_t ns) {
  released_late(ns, 0);
  t_lateness_since = 0;
}

int64_t last_release_ns() { return t_released_ns; }
bool last_wait_slept() { return t_slept; }
void clear_last_release() { t_released_ns = 0, t_slept = false; }

int64_t poll_ns(uint32_t threads) {
  // Once: glibc counts the CPUs by reading /sys/devices/system/cpu/online,
  // an open and a read that cost several microseconds, far more than a
  // receive's own replay.
  static const unsigned cores = std::thread::hardware_concurrency();
  return cores > 0 && threads <= cores ? 100'000'000 : 0;
}

bool CommBarrier::spin_until_released(uint64_t gen) {
  return poll_until([&] { return released(gen) || woken_.load(std::memory_order_relaxed); }, spin_ns_) && released(gen);
}

// The generation is read before arriving: it moves on only once every member,
// this one included, arrived. The last arriver resets the count before moving
// the generation on, so no member of the next round counts in this one.
WaitResult CommBarrier::wait(Progress& progress, Who who) {
  if (woken_.load(std::memory_order_relaxed) || progress.is_aborted()) return WaitResult::aborted;
  uint64_t gen = generation_.load(std::memory_order_acquire);
  // Published by the count's release: the last arriver reads it after its acquire.
  int64_t arrived_ns = mono_now_ns(), planned = arrived_ns - t_lateness_ns;
  for (int64_t seen = planned_max_.load(std::memory_order_relaxed);
       seen < planned && !planned_max_.compare_exchange_weak(seen, planned, std::memory_order_relaxed);) {
  }
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 >= members_) {
    arrived_.store(0, std::memory_order_relaxed);
    t_released_ns = mono_now_ns();  // after every member counted itself in
    released_ns_.store(t_released_ns, std::memory_order_relaxed);
    int64_t planned_release = planned_max_.exchange(INT64_MIN, std::memory_order_relaxed);
    planned_release_ns_.store(planned_release, std::memory_order_relaxed);
    released_late(t_released_ns, planned_release);
    // seq_cst with the sleeper's count and check (Dekker): either it sees
    // the new generation or this sees it counted and wakes it.
    generation_.store(gen + 1, std::memory_order_seq_cst);
    progress.tick();
    wake_word_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) futex_wake(wake_word_);
    return WaitResult::ok;
  }
  if (spin_ns_ > 0 && spin_until_released(gen)) {
    leave_released();  // the next round needs this member: not yet made
    return WaitResult::ok;
  }
  return sleep_until_released(gen, progress, who);
}

void CommBarrier::leave_released() {
  t_released_ns = released_ns_.load(std::memory_order_relaxed);
  released_late(t_released_ns, planned_release_ns_.load(std::memory_order_relaxed));
}

// The sleeper counts itself, then reads the word, then the generation (all
// seq_cst, Dekker with the releaser's generation, word, count): either it
// sees the release, or the word moved (FUTEX_WAIT returns), or the releaser
// sees it counted and wakes it.
WaitResult CommBarrier::sleep_until_released(uint64_t gen, Progress& progress, Who who) {
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  uint32_t word = wake_word_.load(std::memory_order_seq_cst);
  auto leave = [&](WaitResult r) {
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    if (r == WaitResult::ok) leave_released();
    return r;
  };
  if (generation_.load(std::memory_order_seq_cst) != gen) return leave(WaitResult::ok);
  if (woken_.load()) return leave(WaitResult::aborted);
  t_slept = true;
  uint32_t arrived = arrived_.load(std::memory_order_relaxed);
  progress.enter_wait(
      who.str(), "a collective (" + std::to_string(arrived) + " of " + std::to_string(members_) + " members arrived)");
  uint64_t seen = progress.ticks();
  for (;;) {
    bool in_time = futex_wait(wake_word_, word, progress.stall_timeout_ns());
    word = wake_word_.load(std::memory_order_seq_cst);
    if (released(gen) || woken_.load()) break;
    if (in_time || !progress.stalled(seen)) {
      if (!in_time) seen = progress.ticks();
      continue;
    }
    arrived = arrived_.load(std::memory_order_relaxed);
    progress.abort(fmt::format("replay stalled: {} waited {:g} s in a collective where {} of {} members arrived, "
                               "while no thread could proceed",
                               who.str(), double(progress.stall_timeout_ns()) / 1e9, arrived, members_),
                   true);
    progress.leave_wait(true);
    return leave(WaitResult::stalled);
  }
  progress.leave_wait(true);
  return leave(released(gen) ? WaitResult::ok : WaitResult::aborted);
}

void CommBarrier::wake_all() {
  woken_.store(true);
  wake_word_.fetch_add(1, std::memory_order_seq_cst);
  futex_wake(wake_word_);
}

}  // namespace mpior::replay
