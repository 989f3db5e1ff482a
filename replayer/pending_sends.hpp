// The sends a --mpi replay thread has moved past (blocking sends, settled
// Isends) that MPI may not have finished: a rendezvous moves only inside MPI
// calls, so the thread's compute gaps test them (MpiThreadOps::idle_until).
// A send no one receives (the summary's unreceived_sends, a receiver that
// left) would keep every later gap polling and burn a core: once it has
// outlived kStaleGaps gaps and kStaleNs, gaps stop polling for it and only
// the thread's final wait (and every later test) still completes it.
// Each send has its own buffer (its first bytes carry the message's stamp,
// mpi_lateness.hpp), given back for reuse once MPI finished with it: as
// many bytes in flight as the program had.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "replayer/mpi_yield.hpp"

namespace mpior::replay {

// A send's buffer, of a power-of-two size class (64 bytes up). Its bytes
// past the stamp are whatever was there: nothing reads them.
struct SendBuffer {
  std::unique_ptr<char[]> data;
  int size_class = 0;
};

class PendingSends {
 public:
  static constexpr int kStaleGaps = 8;
  static constexpr int64_t kStaleNs = 50'000'000;
  // Free buffers kept for reuse, at most (a thread's: a process may hold a
  // block of ranks): a few of the largest messages a solver keeps in flight.
  static constexpr int64_t kKeptBytes = int64_t(4) << 20;
  static constexpr size_t kTestEvery = 64;

  // A buffer of at least n bytes, reused when one of its class is free.
  SendBuffer buffer(int64_t n) {
    int c = std::bit_width(uint64_t(std::max<int64_t>(n, 64) - 1)) - 6;
    if (std::vector<SendBuffer>& f = free_[size_t(c)]; !f.empty()) {
      SendBuffer b = std::move(f.back());
      f.pop_back();
      kept_ -= capacity(c);
      return b;
    }
    return SendBuffer{std::make_unique_for_overwrite<char[]>(size_t(capacity(c))), c};
  }
  // A buffer no send reads any more.
  void recycle(SendBuffer b) {
    if (!b.data || kept_ + capacity(b.size_class) > kKeptBytes) return;  // freed
    kept_ += capacity(b.size_class);
    free_[size_t(b.size_class)].push_back(std::move(b));
  }

  void add(MPI_Request r, SendBuffer b, int64_t now) {
    reqs_.push_back(r);
    sent_.push_back({now, 0, std::move(b)});
  }
  size_t size() const { return reqs_.size(); }

  // MPI_Testsome over all; the finished ones leave the list.
  int test() {
    if (reqs_.empty()) return MPI_SUCCESS;
    int done = 0;
    idx_.resize(reqs_.size());
    int rc = MPI_Testsome(int(reqs_.size()), reqs_.data(), &done, idx_.data(), MPI_STATUSES_IGNORE);
    if (rc == MPI_SUCCESS && done > 0) drop_finished();
    next_test_ = std::max<size_t>(kTestEvery, 2 * reqs_.size());
    return rc;
  }
  // A send should test the list (keeping it short): it doubled since the last
  // test. Testing at a fixed length would cost each send a Testsome over all
  // of them: a rank whose sends go unmatched for long (to a rank in the same
  // process, which MPICH completes only when received) would make each send
  // slower the further ahead it ran.
  bool due() const { return reqs_.size() >= next_test_; }

  // A gap should keep testing: some send is young (by gaps or by time).
  bool worth_polling(int64_t now) const {
    for (const Sent& s : sent_)
      if (s.gaps < kStaleGaps || now - s.at < kStaleNs) return true;
    return false;
  }

  // A gap ended with these still unfinished.
  void outlived_gap() {
    for (Sent& s : sent_) ++s.gaps;
  }

  // The final wait: every send finished; the list is empty afterwards.
  int wait_all() {
    int rc = reqs_.empty() ? MPI_SUCCESS : waitall_yielding(int(reqs_.size()), reqs_.data());
    reqs_.clear();
    sent_.clear();
    return rc;
  }

 private:
  struct Sent {
    int64_t at;  // posted (mono_now_ns)
    int gaps;    // compute gaps it outlived
    SendBuffer buf;
  };
  static int64_t capacity(int size_class) { return int64_t(64) << size_class; }

  void drop_finished() {
    size_t keep = 0;
    for (size_t i = 0; i < reqs_.size(); ++i) {
      if (reqs_[i] == MPI_REQUEST_NULL) {
        recycle(std::move(sent_[i].buf));
        continue;
      }
      if (keep != i) reqs_[keep] = reqs_[i], sent_[keep] = std::move(sent_[i]);
      ++keep;
    }
    reqs_.resize(keep);
    sent_.resize(keep);
  }

  std::vector<MPI_Request> reqs_;
  std::vector<Sent> sent_;
  std::vector<int> idx_;
  size_t next_test_ = kTestEvery;
  std::array<std::vector<SendBuffer>, 58> free_;  // by size class: 64 << 57 bytes is past any count
  int64_t kept_ = 0;
};

}  // namespace mpior::replay
