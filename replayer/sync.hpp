// MPI synchronisation between replay threads (thesis §2.3): a send posts the
// channel's counting semaphore, a receive waits on it, collectives meet at
// their communicator's barrier. Every wait is guarded: when no thread can
// make progress any more, the replay stops with a message instead of hanging.
#pragma once

#include <semaphore.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace mpior::replay {

// Names a waiting thread and what it waits at ("rank 3 thread 0 at event #7
// (MPI_Barrier)"), made only when a thread sleeps or the replay stalls: not on
// every replayed receive and collective (formatting it cost each barrier two
// allocations). A view: what it was made from must outlive the wait.
class Who {
 public:
  Who(const char* text) : text_(text) {}
  Who(const std::string& text) : text_(text.c_str()) {}
  template <class F, class = std::enable_if_t<std::is_invocable_r_v<std::string, const F&>>>
  Who(const F& make) : obj_(&make), make_([](const void* f) { return (*static_cast<const F*>(f))(); }) {}
  std::string str() const { return make_ ? make_(obj_) : std::string(text_); }

 private:
  const char* text_ = "";
  const void* obj_ = nullptr;
  std::string (*make_)(const void*) = nullptr;
};

// Who is running, who is blocked, and the first reason to stop.
class Progress {
 public:
  Progress(uint32_t threads, double stall_timeout_s);

  int64_t stall_timeout_ns() const { return stall_ns_; }
  // A thread left the replay (finished or gave up).
  void thread_done() { busy_.fetch_sub(1); }
  void enter_wait() { busy_.fetch_sub(1); }
  void leave_wait() {
    busy_.fetch_add(1);
    tick();
  }
  // The same, naming the waiting thread and what it waits for: a stall's
  // reason lists every thread blocked at the time.
  void enter_wait(const std::string& who, const std::string& what);
  void leave_wait(bool named);
  // Every post, every wait passed and every barrier released ticks: on one
  // counter, threads replaying messages to each other took its cache line
  // from each other on every call. The sum changes whenever any slot does.
  void tick() { ticks_[tick_slot()].n.fetch_add(1, std::memory_order_relaxed); }
  uint64_t ticks() const {
    uint64_t sum = 0;
    for (const TickSlot& t : ticks_) sum += t.n.load(std::memory_order_relaxed);
    return sum;
  }
  // A wait timed out: stalled when no thread is running (sleeping, doing I/O)
  // and no synchronisation happened since `ticks_at_start`.
  bool stalled(uint64_t ticks_at_start) const { return busy_.load() <= 0 && ticks() == ticks_at_start; }

  const std::atomic<bool>& aborted() const { return aborted_; }
  bool is_aborted() const { return aborted_.load(); }
  // Records the reason (the first one wins) and wakes every waiter.
  void abort(const std::string& why, bool list_blocked = false);
  std::string reason() const;
  // Called once per abort, to wake threads blocked on semaphores and barriers.
  void set_waker(std::function<void()> wake) {
    std::lock_guard lock(mu_);
    waker_ = std::move(wake);
  }

 private:
  struct alignas(64) TickSlot {
    std::atomic<uint64_t> n{0};
  };
  static constexpr size_t kTickSlots = 16;
  static size_t tick_slot();  // the calling thread's, assigned round-robin at its first tick
  std::atomic<int64_t> busy_;
  std::array<TickSlot, kTickSlots> ticks_;
  std::atomic<bool> aborted_{false};
  int64_t stall_ns_;
  mutable std::mutex mu_;
  std::string reason_;
  std::function<void()> waker_;
  std::map<std::thread::id, std::string> waiting_;  // under mu_
};

// A message channel: (global communicator, source comm rank, destination comm
// rank, tag). Rooted collectives use reserved negative tags.
struct ChannelKey {
  int32_t comm = 0;
  int32_t src = 0;
  int32_t dst = 0;
  int64_t tag = 0;
  bool operator==(const ChannelKey&) const = default;
};
inline constexpr int64_t kTagDown = -100;      // root -> member (bcast, scatter)
inline constexpr int64_t kTagUp = -101;        // member -> root (reduce, gather)
inline constexpr int64_t kTagNeighbor = -102;  // neighbourhood collectives: to each out-neighbour

std::string describe(const ChannelKey& k);

enum class WaitResult { ok, aborted, stalled };

// One counting semaphore per channel, made on first use.
class Channels {
 public:
  Channels(Progress& progress, uint32_t threads);
  ~Channels();
  void post(const ChannelKey& k);
  // Blocks until the channel has a message; on a stall, aborts the replay
  // with `who` + the channel in the message. `drive`, when given, runs
  // between polls, and while it returns true the waiter keeps polling
  // instead of sleeping: MPI mode's thread with sends to other processes in
  // flight (MPI moves a rendezvous only inside MPI calls).
  WaitResult wait(const ChannelKey& k, Who who, const std::function<bool()>* drive = nullptr);
  // Lets every present and future waiter through (after an abort).
  void wake_all();
  // Why the replay stopped (a wait that did not return ok).
  std::string stop_reason() const { return progress_.reason(); }

 private:
  struct Hash {
    size_t operator()(const ChannelKey& k) const;
  };
  // A channel's messages, and when the newest was posted: a receiver that
  // waited for it is released then, and the replay's own hand-off between
  // the threads (polling, a wake-up) counts towards the receive's cost as a
  // collective's late wake-up does (MPICH's own hand-off is in that cost).
  struct Channel {
    sem_t sem;
    std::atomic<int64_t> posted_ns{0};
    std::atomic<int64_t> planned_ns{0};  // posted_ns less the sender's lateness
  };
  struct Shard {
    std::mutex mu;
    std::unordered_map<ChannelKey, Channel, Hash> sems;  // node-based: addresses stay put
  };
  // The channel's semaphore: from the calling thread's small cache, else
  // from its shard (under the shard's lock, made on first use). A thread
  // replays the same few channels over and over (a halo's neighbours, a
  // collective's root): taking the shard's lock on every post and every
  // wait moved its cache line between the sender's and the receiver's cores.
  Channel* get(const ChannelKey& k);
  Channel* get_shared(const ChannelKey& k);
  static constexpr size_t kShards = 64;
  const uint64_t id_;  // tells this instance's cached entries from an earlier one's at the same address
  Progress& progress_;
  uint32_t threads_;
  std::array<Shard, kShards> shards_;
};

// When the last member of the collective this thread last met arrived, or
// when the message its last receive waited for was posted (its entry when the
// message was there first; CLOCK_MONOTONIC ns; 0 before any). A thread that
// went on later than that lost time to the replay's hand-off, which the
// engine counts towards the call's calibrated cost.
int64_t last_release_ns();
// Whether that member slept (past poll_ns) instead of seeing the release while polling.
bool last_wait_slept();
void clear_last_release();

// The calling thread's lateness: how far the replay's own mechanics (its
// dispatch, late wake-ups) put it behind the plan's timeline, time no gap has
// absorbed yet (the pacer's debt). A synchronisation passes lateness on as
// the program's timing would: a collective releases its members when the
// last one arrives, and the plan's timeline would have released them when
// the last one arrived there (each arrival minus its lateness), so every
// member leaves it as late as the one that held it; a receive completes when
// both the receiver and the message were there. A member that waited absorbs
// its own lateness; one that made the others wait hands its lateness to them,
// and they pay it back from their gaps too (else the partners that waited for
// it stayed late for good while it caught up alone).
// `since`: when the thread went on to the synchronisation (its previous
// call's end), for current_lateness.
void set_lateness(int64_t ns, int64_t since = 0);
// The lateness after the synchronisations since set_lateness; -1: none ran.
int64_t lateness_after_sync();
// MPI mode (mpi_lateness.hpp): the lateness set last, which a barrier's
// members pass to each other and a message carries, with the replay's own
// time since `since` (its dispatch up to the MPI call: the real call's time
// is MPI's, which no calibrated cost pays back as the threads' does), and
// what a barrier's members agreed to leave with (a receive: what it left
// with).
int64_t current_lateness(int64_t now);
// The lateness set last, without the time since (the pacer's debt it came from).
int64_t lateness_held();
// It changes by `ns` (a deferred agreement completed), the time since kept;
// the pacer takes it after the synchronisation.
void lateness_changed(int64_t ns);
void lateness_agreed(int64_t ns);

// How long a member polls a collective (and a receive its channel) before
// it sleeps: an MPI library polls, so its members leave within a microsecond
// of the last arrival; a thread put to sleep on a condition variable wakes
// tens of microseconds later (an IPI in a VM), a scheduler tick later on a
// busy machine, which the replay would add to the call. A partner's slower
// write or late gap must not put the first arriver to sleep, hence
// milliseconds of busy polling; then on, up to 100 ms, never yielding
// (poll_until in sync.cpp says why). Longer waits sleep; their wake-up is
// small beside them and paid back as debt. Only while every replay thread
// can have a core (else polling steals the partner's).
int64_t poll_ns(uint32_t threads);

// A barrier with a stall guard (pthread_barrier_wait cannot time out).
// Members arrive on an atomic counter and poll the generation; members that
// stopped polling sleep on a futex word that every release bumps, so one
// FUTEX_WAKE lets them all run at once (a condition variable would hand its
// mutex from one woken member to the next, a convoy at thousands). A
// barrier whose every member took a mutex costs several times one on atomics
// (the lock's cache line and futex hand-offs between the cores), as much as
// an MPI library's own barrier: the replay would add that to each collective
// beside the cost it charges, and a barrier-bound plan would replay long.
class CommBarrier {
 public:
  explicit CommBarrier(uint32_t members, int64_t spin_ns = 0) : members_(members), spin_ns_(spin_ns) {}
  WaitResult wait(Progress& progress, Who who);
  void wake_all();

 private:
  // Polls until the generation moves on or spin_ns_ passed.
  bool spin_until_released(uint64_t gen);
  // Past polling: sleeps on wake_word_ (with the stall guard).
  WaitResult sleep_until_released(uint64_t gen, Progress& progress, Who who);
  bool released(uint64_t gen) const { return generation_.load(std::memory_order_acquire) != gen; }
  // A member that waited: when the last arrived, and its lateness from then on.
  void leave_released();
  uint32_t members_;
  int64_t spin_ns_;
  std::atomic<uint32_t> arrived_{0};
  std::atomic<uint64_t> generation_{0};
  // When the last member of the newest generation arrived: written before
  // the generation moves on (release), read after seeing it move (acquire).
  std::atomic<int64_t> released_ns_{0};
  // The latest of the members' arrivals less their lateness (set_lateness),
  // and the newest generation's: when the plan's timeline released it.
  std::atomic<int64_t> planned_max_{INT64_MIN};
  std::atomic<int64_t> planned_release_ns_{0};
  std::atomic<uint32_t> sleepers_{0};
  std::atomic<bool> woken_{false};
  // Bumped by each release and by wake_all: the futex word sleepers wait on.
  std::atomic<uint32_t> wake_word_{0};
};

}  // namespace mpior::replay
