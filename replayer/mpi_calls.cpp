// MPI mode's replay of each MPI call, dispatched by kind (kind_table.hpp)
// to one handler per op class.
#include <optional>

#include "replayer/kind_table.hpp"
#include "replayer/mpi_ops.hpp"
#include "trace/arg_views.hpp"

namespace mpior::replay {

using trace::Event;
using trace::OpClass;

namespace {

// Collectives whose members all pass the same byte count (MPI's type
// matching): they need no agreement on it.
bool same_bytes_on_all(trace::Kind k) {
  using K = trace::Kind;
  switch (k) {
    case K::MPI_Allreduce:
    case K::MPI_Allreduce_c:
    case K::MPI_Bcast:
    case K::MPI_Bcast_c:
    case K::MPI_Allgather:
    case K::MPI_Allgather_c:
    case K::MPI_Alltoall:
    case K::MPI_Alltoall_c:
    case K::MPI_Reduce_scatter_block:
    case K::MPI_Reduce_scatter_block_c:
    case K::MPI_Scan:
    case K::MPI_Scan_c:
    case K::MPI_Exscan:
    case K::MPI_Exscan_c:
      return true;
    default:
      return false;
  }
}

}  // namespace

// Each kind's replay by its op class (kind_table.hpp), as the threads'
// MpiReplay::calls: a new op class fails the build here until it has one.
constexpr KindTable<MpiThreadOps::Call> MpiThreadOps::calls() {
  using F = trace::Family;
  using Op = OpClass;
  using T = MpiThreadOps;
  return kind_table<Call>({
      // Bookkeeping, as in the threads' replay (a freed request has no communicator).
      {F::mpi, Op::init, &T::bookkeeping},
      {F::mpi, Op::wait, &T::completions_begin},
      {F::mpi, Op::test, &T::completions_begin},
      {F::mpi, Op::irecv, &T::receive_posted},
      {F::mpi, Op::comm_local, &T::made},
      {F::mpi, Op::cancel, &T::cancel},
      {F::mpi, Op::pinit, &T::bookkeeping},
      {F::mpi, Op::icoll, &T::bookkeeping},
      {F::mpi, Op::probe, &T::bookkeeping},
      {F::mpi, Op::request, &T::bookkeeping},
      {F::mpi, Op::finalize, &T::finalize},
      {F::mpi, Op::send, &T::on_comm<&T::send_call>},
      {F::mpi, Op::isend, &T::on_comm<&T::isend_call>},
      {F::mpi, Op::start, &T::on_comm<&T::start_call>},
      {F::mpi, Op::recv, &T::on_comm<&T::recv_call>},
      {F::mpi, Op::sendrecv, &T::on_comm<&T::sendrecv_call>},
      {F::mpi, Op::allcoll, &T::on_comm<&T::allcoll_call>},
      {F::mpi, Op::barrier, &T::on_comm<&T::barrier_call>},
      {F::mpi, Op::bcast, &T::on_comm<&T::rooted_call>},
      {F::mpi, Op::scatter, &T::on_comm<&T::rooted_call>},
      {F::mpi, Op::reduce, &T::on_comm<&T::rooted_call>},
      {F::mpi, Op::gather, &T::on_comm<&T::rooted_call>},
      // Communicators are made and freed among their members only: as the
      // program's, these synchronise no more than MPI's own construction does.
      {F::mpi, Op::comm_create, &T::on_comm<&T::created_call>},
      {F::mpi, Op::comm_free, &T::on_comm<&T::freed_call>},
      {F::posix, std::nullopt, &T::bookkeeping},  // the engine hands only MPI calls here
      {F::stdio, std::nullopt, &T::bookkeeping},
      {F::aio, std::nullopt, &T::bookkeeping},
      {F::mmap, std::nullopt, &T::bookkeeping},
      {F::mpiio, std::nullopt, &T::bookkeeping},
      {F::internal, std::nullopt, &T::bookkeeping},
  });
}

bool MpiThreadOps::replay(const Event& ev, uint64_t event_no) {
  static constexpr auto kCalls = calls();
  static_assert(every_kind_handled(kCalls), "an MPI kind of trace/api/*.list has no MPI-mode replay: register one");
  BlockedIn blocked(b_.board(), slot_, ev.kind, event_no);
  return (this->*kCalls[size_t(ev.kind)])(ev);
}

bool MpiThreadOps::completions_begin(const Event&) {
  completions_ = {};
  return true;
}

bool MpiThreadOps::cancel(const Event& ev) {
  const trace::MpiArgs a = mpi_args(ev);
  if (a.req_kind() == trace::kReqSend) cancel_send(a.request());
  return true;
}

bool MpiThreadOps::finalize(const Event& ev) {  // every rank leaves MPI together
  Comm c;
  if (comm_of(ev, 0, &c)) agreed_barrier(c, false);
  return true;
}

bool MpiThreadOps::send_call(const Event& ev, const Comm& c) {
  const trace::MpiArgs a = mpi_args(ev);
  if (a.peer() != trace::kProcNull) send(c, b_.comm(c.id).msg, int32_t(a.peer()), a.tag(), a.bytes());
  return true;
}

bool MpiThreadOps::isend_call(const Event& ev, const Comm& c) {
  const trace::MpiArgs a = mpi_args(ev);
  if (a.peer() != trace::kProcNull) send(c, b_.comm(c.id).msg, int32_t(a.peer()), a.tag(), a.bytes(), a.request());
  return true;
}

bool MpiThreadOps::start_call(const Event& ev,
                              const Comm& c) {  // a persistent (or partitioned) send starts: its message goes now
  const trace::MpiArgs a = mpi_args(ev);
  if (a.req_kind() == trace::kReqSend && a.peer() != trace::kProcNull)
    send(c, b_.comm(c.id).msg, int32_t(a.peer()), a.tag(), a.bytes());
  return true;
}

bool MpiThreadOps::recv_call(const Event& ev, const Comm& c) {
  const trace::MpiArgs a = mpi_args(ev);
  return receive_event(ev, c, a.peer(), a.tag());
}

bool MpiThreadOps::sendrecv_call(const Event& ev, const Comm& c) {
  const trace::MpiArgs a = mpi_args(ev);
  send_call(ev, c);
  return receive_event(ev, c, a.peer2(), a.tag2());
}

bool MpiThreadOps::allcoll_call(const Event& ev, const Comm& c) {
  if (ev.flags & trace::flag::neighbor)
    neighborhood(ev, c);
  else
    collective(ev.op(), mpi_args(ev).bytes(), -1, c, same_bytes_on_all(ev.kind));
  return true;
}

bool MpiThreadOps::barrier_call(const Event& ev, const Comm& c) {
  collective(ev.op(), 0, -1, c);
  return true;
}

bool MpiThreadOps::rooted_call(const Event& ev, const Comm& c) {
  const trace::MpiArgs a = mpi_args(ev);
  const OpClass op = ev.op();
  int64_t bytes = a.bytes(), root = a.root();
  if (a.remote_size() > 0)
    inter_rooted(c, root, a.remote_begin(), a.remote_size(), trace::is_one_to_all(op), bytes);
  else if (trace::is_one_to_all(op))
    collective(op, bytes, root, c, same_bytes_on_all(ev.kind));
  else
    rooted_up(c, root, bytes, a.contributors() > 0);
  return true;
}

bool MpiThreadOps::freed_call(const Event&, const Comm& c) {
  b_.unmake(c.id);
  return true;
}

}  // namespace mpior::replay
