#include "replayer/mpi_lateness.hpp"

#include <algorithm>

#include "replayer/mpi_yield.hpp"
#include "replayer/pacing_clock.hpp"
#include "replayer/sync.hpp"

namespace mpior::replay {

namespace {
constexpr int kUnitShift = 4;  // 16 ns
int32_t to_units(int64_t ns) {
  int64_t units = (ns + (int64_t(1) << (kUnitShift - 1))) >> kUnitShift;  // rounded: no bias a barrier
  return int32_t(std::clamp<int64_t>(units, INT32_MIN, INT32_MAX));
}

// The latest planned and the latest real arrival, since `since`, and a
// Barrier's long_gap: what every member's agreement carries.
int encode(const Arrival& a, int64_t since, const BarrierSpacing* spacing, int32_t (&units)[3]) {
  int32_t planned = to_units(a.planned - since);
  units[0] = planned, units[1] = std::max(planned, to_units(a.planned + a.lateness - since));
  if (!spacing) return 2;
  units[2] = a.long_gap;
  return 3;
}
Arrival decode(const int32_t (&units)[3], int64_t& since, BarrierSpacing* spacing) {
  since += int64_t(units[0]) << kUnitShift;
  if (spacing) spacing->apart = units[2] != 0;
  return Arrival{since, int64_t(units[1] - units[0]) << kUnitShift};
}
}  // namespace

Arrival arrive(const SharedClock& clock) {
  int64_t now = mono_now_ns(), lateness = std::max<int64_t>(0, current_lateness(now));
  return Arrival{now + clock.offset_ns - clock.epoch_ns - lateness, lateness};
}

int agree(Arrival& a, int64_t& since, MPI_Comm comm, BarrierSpacing* spacing, bool as_deferred) {
  int32_t units[3];
  int n = encode(a, since, spacing, units), rc = MPI_SUCCESS;
  if (as_deferred) {
    MPI_Request req = MPI_REQUEST_NULL;
    rc = MPI_Iallreduce(MPI_IN_PLACE, units, n, MPI_INT32_T, MPI_MAX, comm, &req);
    if (rc == MPI_SUCCESS) rc = waitall_yielding(1, &req);
  } else {
    rc = MPI_Allreduce(MPI_IN_PLACE, units, n, MPI_INT32_T, MPI_MAX, comm);
  }
  a = decode(units, since, spacing);
  return rc;
}

int DeferredAgreement::start(const Arrival& a, int64_t& since, MPI_Comm comm, int64_t held, BarrierSpacing& spacing) {
  int64_t t = mono_now_ns();
  int n = encode(a, since, &spacing, units_);
  since_ = &since, held_ = held, active_ = true, spacing_ = &spacing;
  int rc = MPI_Iallreduce(MPI_IN_PLACE, units_, n, MPI_INT32_T, MPI_MAX, comm, &req_);
  cost_ = mono_now_ns() - t;
  return rc;
}

int DeferredAgreement::test(bool& done) {
  int flag = 0, rc = MPI_Test(&req_, &flag, MPI_STATUS_IGNORE);
  done = flag != 0 || rc != MPI_SUCCESS;
  return rc;
}

int DeferredAgreement::finish(int64_t& lateness) {
  int rc = req_ == MPI_REQUEST_NULL ? MPI_SUCCESS : waitall_yielding(1, &req_);
  req_ = MPI_REQUEST_NULL, active_ = false;
  Arrival agreed = decode(units_, *since_, spacing_);
  lateness = agreed.lateness + cost_ - held_;
  return rc;
}

void leave(const Arrival& agreed, const SharedClock* now) {
  if (!now) return lateness_agreed(agreed.lateness);
  lateness_agreed(mono_now_ns() + now->offset_ns - now->epoch_ns - agreed.planned);
}

MessageStamp stamp(const SharedClock& clock) {
  int64_t now = mono_now_ns(), lateness = std::max<int64_t>(0, current_lateness(now));
  int64_t posted = now + clock.offset_ns - clock.epoch_ns;
  return MessageStamp{posted, posted - lateness};
}

SharedClock share_process0_clock(int me, int procs) {
  constexpr int kRounds = 8;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  SharedClock clock;
  int64_t fastest = INT64_MAX;
  for (int p = 1; p < procs; ++p) {  // process 0 answers each in turn
    for (int i = 0; i < kRounds && (me == 0 || me == p); ++i) {
      int64_t sent = mono_now_ns(), theirs = 0;
      if (me == 0) {
        MPI_Recv(&theirs, 1, MPI_INT64_T, p, 0, comm, MPI_STATUS_IGNORE);
        int64_t reading = mono_now_ns();
        MPI_Send(&reading, 1, MPI_INT64_T, p, 0, comm);
        continue;
      }
      MPI_Send(&sent, 1, MPI_INT64_T, 0, 0, comm);
      MPI_Recv(&theirs, 1, MPI_INT64_T, 0, 0, comm, MPI_STATUS_IGNORE);
      int64_t back = mono_now_ns();
      if (back - sent < fastest) fastest = back - sent, clock.offset_ns = theirs - (sent + back) / 2;
    }
  }
  clock.epoch_ns = mono_now_ns();
  MPI_Bcast(&clock.epoch_ns, 1, MPI_INT64_T, 0, comm);
  MPI_Comm_free(&comm);
  return clock;
}

}  // namespace mpior::replay
