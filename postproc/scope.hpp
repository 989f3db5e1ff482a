// What the per-event passes need to know about the rank being scanned: how
// its local file and communicator ids map to global ones, and how to name an
// event in an error message.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "postproc/comms.hpp"
#include "postproc/rank_events.hpp"
#include "trace/event.hpp"

namespace mpior::postproc {

class RankScope {
 public:
  RankScope(int32_t rank, const std::string& path, const std::vector<int32_t>& files, const CommResolution& comms);

  int32_t rank() const { return rank_; }
  const std::string& path() const { return *path_; }
  uint32_t thread_of(const EventPos& pos) const { return threads_[pos.stream]; }
  void set_threads(std::vector<uint32_t> threads) { threads_ = std::move(threads); }
  // An event's start on rank 0's clock (aligned at MPI_Init; the rank's own without MPI).
  int64_t aligned_ns(const trace::Event& ev) const { return clock_base_ns_ + ev.start_ns; }
  void set_clock_base(int64_t ns) { clock_base_ns_ = ns; }

  // Global file id named in a file slot (arg::file, arg::file2), -1 for none.
  int32_t file(const trace::Event& ev, int slot, const EventPos& pos) const;
  // Global id of the event's communicator (arg::comm).
  int32_t comm(const trace::Event& ev, const EventPos& pos) const;
  // This rank's position in the event's communicator.
  int32_t position(const trace::Event& ev) const;
  // World rank of a communicator rank; `what` says which slot, for the message.
  int32_t world_rank(int32_t global_comm, int64_t comm_rank, const trace::Event& ev, const EventPos& pos,
                     const char* what) const;

  // "DIR/rank-000003.mpior: MPI_Send (thread 0, event 12)"
  std::string where(const trace::Event& ev, const EventPos& pos) const;

 private:
  int32_t rank_;
  const std::string* path_;
  const std::vector<int32_t>* files_;
  const CommResolution* comms_;
  std::vector<uint32_t> threads_;
  int64_t clock_base_ns_ = 0;
};

}  // namespace mpior::postproc
