// Allreduce and Bcast carrying their pruning decision inside the
// application's own call (preload/piggyback/inline_decision.hpp) when the payload is
// small and, for Allreduce, the type and operation allow: no exchange on
// the shadow. Other calls take coll()/coll_rooted(). Included by
// mpi_handlers.hpp.
#pragma once

namespace mpior::preload::mpi {

// Whether this call on comm carries its decision inline (equal on every
// member: it depends on the communicator and the call's size only). Not on a
// communicator of one: there is no one to carry it to, and coll()'s
// decides_alone path times the real call alone, where the flag's packing
// and the larger buffer would land in the call's duration and, the call
// pruned, in the computation the replay reproduces, which for a cheap
// collective is several times the call's own cost.
bool inline_decision(int32_t comm, int64_t bytes) noexcept;
// The real calls with the decision inside; *log: whether to keep the record.
int inline_allreduce(Call& c, int32_t comm, const piggyback::FlagCodec& codec, const void* sendbuf, void* recvbuf,
                     int count, MPI_Datatype t, MPI_Op op, MPI_Comm mc, bool* log) noexcept;
int inline_bcast(Call& c, int32_t comm, void* buffer, int count, MPI_Datatype t, int64_t bytes, int root, MPI_Comm mc,
                 bool* log) noexcept;

template <typename Invoke, typename Count>
int allreduce(Call& c, Invoke&& invoke, const void* sendbuf, void* recvbuf, Count count, MPI_Datatype t, MPI_Op op,
              MPI_Comm comm) {
  int64_t bytes = expr::tbytes(count, t);
  int32_t id = state().comm_id(comm);
  piggyback::FlagCodec codec;
  if (count < 0 || !inline_decision(id, bytes) || !piggyback::codec_for(t, op, &codec))
    return coll_on(c, invoke, id, bytes);
  bool log = true;
  int rc = inline_allreduce(c, id, codec, sendbuf, recvbuf, int(count), t, op, comm, &log);  // stops c
  fill_collective(c, rc, id, -1, bytes);
  if (!log) prune(c);
  return rc;
}

template <typename Invoke, typename Count>
int bcast(Call& c, Invoke&& invoke, void* buffer, Count count, MPI_Datatype t, int root, MPI_Comm comm) {
  int64_t bytes = expr::tbytes(count, t);
  int32_t id = state().comm_id(comm);
  if (count < 0 || root < 0 || !inline_decision(id, bytes)) return coll_rooted_on(c, invoke, comm, id, root, bytes);
  bool log = true;
  int rc = inline_bcast(c, id, buffer, int(count), t, bytes, root, comm, &log);  // stops c
  fill_collective(c, rc, id, root, bytes);
  if (!log) prune(c);
  return rc;
}

}  // namespace mpior::preload::mpi
