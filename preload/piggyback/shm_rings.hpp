// Auxiliary messages between the ranks of one node without MPI (issue 11):
// one single-producer single-consumer ring per ordered pair of a node's
// ranks, in an MPI shared-memory window. A send writes its auxiliary message
// into the receiver's ring before the application message leaves, so the
// receiver finds it there by the time that message has arrived (MPI's own
// transport orders the two). A full ring (the receiver has not received for
// a while) or a rank of another node takes the MPI path (aux.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "preload/mpi_abi.hpp"

namespace mpior::piggyback {

struct AuxMessage;

class ShmRings {
 public:
  // Collective over `world` (the tracer's private MPI_COMM_WORLD), inside
  // MPI_Init; false (and no rings) when MPI cannot share memory here.
  bool start(MPI_Comm world, int world_rank, int world_size);
  // Collective, inside MPI_Finalize.
  void finish();
  bool local(int world) const {
    return world >= 0 && size_t(world) < local_of_.size() && local_of_[size_t(world)] >= 0;
  }
  // Writes m into dest's ring from this rank; false: not local or full.
  bool put(int dest_world, const AuxMessage& m);
  // Appends to out every message src has written to this rank since the
  // last call, oldest first.
  void drain(int src_world, std::vector<AuxMessage>& out);
  // Takes src's oldest unread message into *m when it is the one asked for
  // (channel key, tag, sequence number): the common case, messages received
  // in the order they were sent. False, leaving it, otherwise.
  bool take_next_if(int src_world, uint64_t key, int32_t tag, uint64_t seq, AuxMessage* m);

 private:
  static constexpr uint64_t kSlots = 64;
  struct Ring;
  Ring* ring(int owner_local, int src_local) const;

  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  int me_ = -1, size_ = 0;
  std::vector<int32_t> local_of_;  // world rank -> node rank, -1 elsewhere
  std::vector<char*> base_;        // node rank -> its segment (its inbox rings)
  // This rank's own counters, kept out of the shared lines: per node rank,
  // messages written to it, its tail as last read, messages read from it.
  std::vector<uint64_t> head_, seen_tail_, tail_;
};

}  // namespace mpior::piggyback
