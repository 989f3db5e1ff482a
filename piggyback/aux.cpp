#include "aux.hpp"

#include "mpi_state.hpp"

namespace mpior::piggyback {

namespace pmpi = preload::mpi::pmpi;

namespace {
constexpr int kAuxTag = 0;  // the shadow carries nothing else
constexpr size_t kReclaimPerSend = 4;
}  // namespace

// Sends complete in order for one destination and, small as they are, almost
// at once: testing the oldest few on every send keeps the pool small.
void AuxMessenger::reclaim() {
  for (size_t i = 0; i < kReclaimPerSend && !in_flight_.empty(); ++i) {
    size_t s = in_flight_.front();
    int done = 0;
    pmpi::Test(&slots_[s].req, &done, MPI_STATUS_IGNORE);
    if (!done) break;
    in_flight_.pop_front();
    free_.push_back(s);
  }
}

void AuxMessenger::send(MPI_Comm shadow, int dest, const AuxMessage& m) {
  reclaim();
  size_t s;
  if (!free_.empty()) {
    s = free_.back();
    free_.pop_back();
  } else {
    s = slots_.size();
    slots_.emplace_back();
  }
  slots_[s].msg = m;
  pmpi::Isend(&slots_[s].msg, int(sizeof(AuxMessage)), MPI_BYTE, dest, kAuxTag, shadow, &slots_[s].req);
  in_flight_.push_back(s);
}

AuxMessage AuxMessenger::receive(int32_t comm, MPI_Comm shadow, int src, int32_t tag, uint64_t seq) {
  std::vector<AuxMessage>& early = early_[{comm, src, 0}];
  for (size_t i = 0; i < early.size(); ++i) {
    if (early[i].tag == tag && early[i].seq == seq) {
      AuxMessage m = early[i];
      early.erase(early.begin() + long(i));
      return m;
    }
  }
  for (;;) {
    AuxMessage m;
    pmpi::Recv(&m, int(sizeof(AuxMessage)), MPI_BYTE, src, kAuxTag, shadow, MPI_STATUS_IGNORE);
    if (m.tag == tag && m.seq == seq) return m;
    early.push_back(m);  // another message of src's, received out of order by the application
  }
}

void AuxMessenger::finish() {
  std::vector<MPI_Request> reqs;
  for (size_t s : in_flight_) reqs.push_back(slots_[s].req);
  if (!reqs.empty()) pmpi::Waitall(int(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
  in_flight_.clear();
}

}  // namespace mpior::piggyback
