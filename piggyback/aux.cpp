#include "aux.hpp"

#include <time.h>

#include "mpi_state.hpp"

namespace mpior::piggyback {

namespace pmpi = preload::mpi::pmpi;

namespace {
constexpr int kAuxTag = 0;  // the shadow carries nothing else
constexpr size_t kReclaimPerSend = 4;
constexpr uint64_t kAuxPatienceNs = 2000000000ull;  // 2 s
}  // namespace

// Sends complete in order for one destination and, small as they are, almost
// at once: testing the oldest few on every send keeps the pool small (a test
// of a completed request does not run MPI's progress engine).
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

namespace {
uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}
}  // namespace

// Waits for src's next auxiliary message, but never for ever: a message
// whose sender sent none (a call the tracer does not wrap, a send cancelled
// after its auxiliary message left) must not hang the application. After
// kAuxPatience the caller logs conservatively; a late message stays with the
// early ones, found by its sequence number.
bool AuxMessenger::next_from(MPI_Comm shadow, int src, AuxMessage* m) {
  MPI_Request req = MPI_REQUEST_NULL;
  if (pmpi::Irecv(m, int(sizeof(AuxMessage)), MPI_BYTE, src, kAuxTag, shadow, &req) != MPI_SUCCESS) return false;
  int done = 0;
  uint64_t deadline = 0;
  for (uint32_t spins = 0;; ++spins) {
    pmpi::Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return true;
    if ((spins & 1023) != 1023) continue;
    uint64_t t = now_ns();
    if (!deadline) deadline = t + kAuxPatienceNs;
    if (t > deadline) break;
  }
  pmpi::Cancel(&req);
  MPI_Status st;
  pmpi::Wait(&req, &st);
  int cancelled = 0;
  pmpi::Test_cancelled(&st, &cancelled);
  ++missing_;
  return !cancelled;
}

AuxMessage AuxMessenger::receive(int32_t comm, MPI_Comm shadow, int src, int32_t tag, uint64_t seq, bool* found) {
  *found = true;
  ChannelKey key{comm, src, 0};
  auto it = early_.empty() ? early_.end() : early_.find(key);
  if (it != early_.end()) {
    std::vector<AuxMessage>& early = it->second;
    for (size_t i = 0; i < early.size(); ++i) {
      if (early[i].tag == tag && early[i].seq == seq) {
        AuxMessage m = early[i];
        early.erase(early.begin() + long(i));
        if (early.empty()) early_.erase(it);
        return m;
      }
    }
  }
  for (;;) {
    AuxMessage m;
    if (!next_from(shadow, src, &m)) break;
    if (m.tag == tag && m.seq == seq) return m;
    early_[key].push_back(m);  // another message of src's, received out of order by the application
  }
  *found = false;
  return {};
}

// Nothing here waits: auxiliary sends nobody will receive (the receive was
// cancelled, or never made) are let go, and auxiliary messages nobody asked
// for are drained, so MPI_Finalize finds no traffic of the tracer's.
void AuxMessenger::finish(const std::vector<MPI_Comm>& shadows) {
  for (size_t s : in_flight_) {
    int done = 0;
    pmpi::Test(&slots_[s].req, &done, MPI_STATUS_IGNORE);
    if (!done) pmpi::Request_free(&slots_[s].req);
  }
  in_flight_.clear();
  for (MPI_Comm shadow : shadows) {
    for (;;) {
      int flag = 0;
      MPI_Status st;
      pmpi::Iprobe(MPI_ANY_SOURCE, kAuxTag, shadow, &flag, &st);
      if (!flag) break;
      AuxMessage m;
      pmpi::Recv(&m, int(sizeof(AuxMessage)), MPI_BYTE, st.MPI_SOURCE, kAuxTag, shadow, MPI_STATUS_IGNORE);
    }
  }
  early_.clear();
}

}  // namespace mpior::piggyback
