#include "preload/piggyback/aux.hpp"

#include <time.h>

#include "preload/config.hpp"
#include "preload/mpi_state.hpp"

namespace mpior::piggyback {

namespace pmpi = preload::mpi::pmpi;

namespace {
constexpr int kAuxTag = 0;  // the shadow carries nothing else
constexpr size_t kReclaimPerSend = 4;
constexpr uint64_t kAuxPatienceNs = 2000000000ull;  // 2 s
constinit preload::config::Option<bool> opt_aux_shm{
    "MPIOR_AUX_SHM", true,
    "pruning: auxiliary messages between ranks of one node go through shared-memory rings (an MPI shared window) "
    "instead of MPI messages; 0 sends them all by MPI"};
MPIOR_REGISTER_OPTION(opt_aux_shm);
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

void AuxMessenger::start(MPI_Comm shadow, int me, int size) {
  shadow_ = shadow;
  use_rings_ = opt_aux_shm.get() && rings_.start(shadow, me, size);
}

void AuxMessenger::send(int dest, const AuxMessage& m) {
  if (use_rings_ && rings_.put(dest, m)) return;
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
  pmpi::Isend(&slots_[s].msg, int(sizeof(AuxMessage)), MPI_BYTE, dest, kAuxTag, shadow_, &slots_[s].req);
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
bool AuxMessenger::next_from(int src, AuxMessage* m) {
  MPI_Request req = MPI_REQUEST_NULL;
  if (pmpi::Irecv(m, int(sizeof(AuxMessage)), MPI_BYTE, src, kAuxTag, shadow_, &req) != MPI_SUCCESS) return false;
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

bool AuxMessenger::take_early(const EarlyKey& key, int32_t tag, uint64_t seq, AuxMessage* m) {
  auto it = early_.empty() ? early_.end() : early_.find(key);
  if (it == early_.end()) return false;
  std::vector<AuxMessage>& early = it->second;
  for (size_t i = 0; i < early.size(); ++i) {
    if (early[i].tag == tag && early[i].seq == seq) {
      *m = early[i];
      early.erase(early.begin() + long(i));
      if (early.empty()) early_.erase(it);
      return true;
    }
  }
  return false;
}

AuxMessage AuxMessenger::receive(uint64_t ckey, int src, int32_t tag, uint64_t seq, bool* found) {
  *found = true;
  EarlyKey key{ckey, src};
  AuxMessage m;
  if (take_early(key, tag, seq, &m)) return m;
  if (use_rings_ && rings_.local(src)) {
    // Written before the application message left: here by now, unless the
    // ring was full and it took MPI.
    if (rings_.take_next_if(src, ckey, tag, seq, &m)) return m;
    drained_.clear();
    rings_.drain(src, drained_);
    bool hit = false;
    for (const AuxMessage& d : drained_) {
      if (!hit && d.comm_key == ckey && d.tag == tag && d.seq == seq) {
        m = d;
        hit = true;
      } else {
        stash(src, d);
      }
    }
    if (hit) return m;
  }
  for (;;) {
    if (!next_from(src, &m)) break;
    if (m.comm_key == ckey && m.tag == tag && m.seq == seq) return m;
    stash(src, m);  // another message of src's: another communicator, or received out of order by the application
  }
  *found = false;
  return {};
}

// Nothing here waits: auxiliary sends nobody will receive (the receive was
// cancelled, or never made) are let go, and auxiliary messages nobody asked
// for are drained, so MPI_Finalize finds no traffic of the tracer's.
void AuxMessenger::finish() {
  for (size_t s : in_flight_) {
    int done = 0;
    pmpi::Test(&slots_[s].req, &done, MPI_STATUS_IGNORE);
    if (!done) pmpi::Request_free(&slots_[s].req);
  }
  in_flight_.clear();
  for (;;) {
    int flag = 0;
    MPI_Status st;
    pmpi::Iprobe(MPI_ANY_SOURCE, kAuxTag, shadow_, &flag, &st);
    if (!flag) break;
    AuxMessage m;
    pmpi::Recv(&m, int(sizeof(AuxMessage)), MPI_BYTE, st.MPI_SOURCE, kAuxTag, shadow_, MPI_STATUS_IGNORE);
  }
  early_.clear();
  if (use_rings_) rings_.finish();
  use_rings_ = false;
}

}  // namespace mpior::piggyback
