// The --mpi replay's send buffers (each send its own, its first bytes the
// message's stamp) and when a send tests the list of sends in flight.
#include "replayer/pending_sends.hpp"

#include <catch2/catch.hpp>

using mpior::replay::PendingSends;
using mpior::replay::SendBuffer;

TEST_CASE("send buffers come in power-of-two classes and are reused once given back", "[mpi]") {
  PendingSends p;
  SendBuffer a = p.buffer(16), b = p.buffer(64), c = p.buffer(65), d = p.buffer(5000);
  CHECK(a.size_class == 0);
  CHECK(b.size_class == 0);
  CHECK(c.size_class == 1);
  CHECK(d.size_class == 7);             // 8 KiB
  CHECK(a.data.get() != b.data.get());  // two sends in flight never share a stamp
  char* reused = d.data.get();
  p.recycle(std::move(d));
  SendBuffer e = p.buffer(4100);  // the same class: the one given back
  CHECK(e.data.get() == reused);
  SendBuffer f = p.buffer(4100);  // none free: a new one
  CHECK(f.data.get() != reused);
}

TEST_CASE("free send buffers are kept up to a bound, the rest freed", "[mpi]") {
  PendingSends p;
  const int64_t big = PendingSends::kKeptBytes / 2;
  SendBuffer a = p.buffer(big), b = p.buffer(big), c = p.buffer(big);
  char* first = a.data.get();
  p.recycle(std::move(a));
  p.recycle(std::move(b));
  p.recycle(std::move(c));  // past the bound: freed
  SendBuffer x = p.buffer(big), y = p.buffer(big), z = p.buffer(big);
  CHECK((x.data.get() == first || y.data.get() == first));
  CHECK(z.size_class == x.size_class);
}

TEST_CASE("a send tests the list once it holds 64", "[mpi]") {
  PendingSends p;  // (MPI_Testsome needs MPI_Init: the doubling is exercised under mpirun, replay_mpi_ messages)
  for (int i = 0; i < 63; ++i) p.add(MPI_REQUEST_NULL, p.buffer(16), 0);
  CHECK_FALSE(p.due());
  p.add(MPI_REQUEST_NULL, p.buffer(16), 0);
  CHECK(p.due());
  CHECK(p.size() == 64);
}
