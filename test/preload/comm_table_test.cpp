// The tracer's communicator table (preload/mpi_state.cpp) as the periodic
// flush encodes it, against real MPICH communicators (MPI_Init as a
// singleton): each flush appends the entries made since the one before, and
// the trace decodes as the one the whole table gives.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <vector>

#include "preload/mpi_state.hpp"

using namespace mpior;
using preload::mpi::MpiState;

namespace {

void init_mpi() {
  static const bool once = [] {
    int up = 0;
    MPI_Initialized(&up);
    if (!up) MPI_Init(nullptr, nullptr);
    std::atexit([] { MPI_Finalize(); });
    return true;
  }();
  (void)once;
}

// One flush: appends to *enc, checks it against the whole table; the table.
std::vector<trace::CommEntry> flush(MpiState& st, trace::EncodedComms* enc) {
  st.encode_comms(enc);
  trace::RankTrace whole, bare;
  whole.comms = st.comms();
  REQUIRE(enc->count == whole.comms.size());
  trace::RankTrace back = trace::decode_rank_trace(trace::encode(bare, *enc), "flush");
  REQUIRE(back == whole);
  return back.comms;
}

}  // namespace

TEST_CASE("each flush appends the communicators made since the last one", "[preload][comms]") {
  init_mpi();
  REQUIRE(preload::mpi::pmpi::resolve());
  MpiState st;
  st.init(0, 1);
  trace::EncodedComms enc;
  enc.frame_bytes = 64;                  // a few entries per compressed frame
  REQUIRE(flush(st, &enc).size() == 2);  // world and self
  for (int round = 0; round < 3; ++round) {
    std::vector<MPI_Comm> made(20);
    for (size_t i = 0; i < made.size(); ++i) {
      REQUIRE(MPI_Comm_dup(MPI_COMM_WORLD, &made[i]) == MPI_SUCCESS);
      st.add_comm(made[i], trace::CommOrigin::dup, 0, i, 0, 0);
    }
    std::vector<trace::CommEntry> table = flush(st, &enc);
    REQUIRE(table.size() == 2 + 20 * size_t(round + 1));
    REQUIRE(table.back().origin == trace::CommOrigin::dup);
    REQUIRE(table.back().parent_seq == 19);
    REQUIRE(table.back().members == std::vector<int32_t>{0});
    for (MPI_Comm& c : made) {
      st.forget_comm(c);
      MPI_Comm_free(&c);
    }
    // Freed communicators keep their entries (events name them); handles
    // MPICH reuses get new ones.
    REQUIRE(flush(st, &enc).size() == table.size());
  }
  // A communicator first seen in a call is registered, and in the next flush.
  MPI_Comm split;
  REQUIRE(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &split) == MPI_SUCCESS);
  int32_t id = st.comm_id(split);
  std::vector<trace::CommEntry> table = flush(st, &enc);
  REQUIRE(table.size() == 63);
  REQUIRE(table.back().id == id);
  REQUIRE(table.back().origin == trace::CommOrigin::unknown);
  st.forget_comm(split);
  MPI_Comm_free(&split);
  // A table that is not this one's (a fresh state) starts again from its first entry.
  MpiState other;
  other.init(0, 1);
  REQUIRE(flush(other, &enc).size() == 2);
}
