// The sends a --mpi replay thread has moved past (blocking sends, settled
// Isends) that MPI may not have finished: a rendezvous moves only inside MPI
// calls, so the thread's compute gaps test them (MpiThreadOps::idle_until).
// A send no one receives (the summary's unreceived_sends, a receiver that
// left) would keep every later gap polling and burn a core: once it has
// outlived kStaleGaps gaps and kStaleNs, gaps stop polling for it and only
// the thread's final wait (and every later test) still completes it.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mpior::replay {

class PendingSends {
 public:
  static constexpr int kStaleGaps = 8;
  static constexpr int64_t kStaleNs = 50'000'000;

  void add(MPI_Request r, int64_t now) {
    reqs_.push_back(r);
    sent_.push_back({now, 0});
  }
  size_t size() const { return reqs_.size(); }

  // MPI_Testsome over all; the finished ones leave the list.
  int test() {
    if (reqs_.empty()) return MPI_SUCCESS;
    int done = 0;
    idx_.resize(reqs_.size());
    int rc = MPI_Testsome(int(reqs_.size()), reqs_.data(), &done, idx_.data(), MPI_STATUSES_IGNORE);
    if (rc == MPI_SUCCESS && done > 0) drop_finished();
    return rc;
  }

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

  // Every request, for the final wait; the list is empty afterwards.
  std::vector<MPI_Request> take() {
    sent_.clear();
    return std::move(reqs_);
  }

 private:
  struct Sent {
    int64_t at;  // posted (mono_now_ns)
    int gaps;    // compute gaps it outlived
  };

  void drop_finished() {
    size_t keep = 0;
    for (size_t i = 0; i < reqs_.size(); ++i)
      if (reqs_[i] != MPI_REQUEST_NULL) {
        reqs_[keep] = reqs_[i];
        sent_[keep] = sent_[i];
        ++keep;
      }
    reqs_.resize(keep);
    sent_.resize(keep);
  }

  std::vector<MPI_Request> reqs_;
  std::vector<Sent> sent_;
  std::vector<int> idx_;
};

}  // namespace mpior::replay
