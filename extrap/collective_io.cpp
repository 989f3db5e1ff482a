#include "extrap/collective_io.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "extrap/library_io.hpp"
#include "trace/transfer.hpp"

namespace mpior::extrap {

namespace {

bool starts_collective_transfer(const trace::Event& ev) { return trace::collective_transfer(ev); }

struct Moved {
  double ns = 0, bytes = 0;
  double per_byte() const { return bytes > 0 ? ns / bytes : 0; }
};

// The nested calls' count and the time and bytes of their data transfers.
uint64_t measure(const Input& in, Moved& written, Moved& read) {
  uint64_t calls = 0;
  for (const trace::Stream& s : in.plan.streams)
    for (int64_t r : s.rank_list())
      walk_nested(s, r, starts_collective_transfer, [&](const trace::Event& ev, bool nested) {
        if (!nested) return;
        ++calls;
        trace::Transfer t[2];
        int n = trace::transfers(ev, t);
        for (int i = 0; i < n; ++i) {
          Moved& m = t[i].write ? written : read;
          m.bytes += double(t[i].bytes);
          m.ns += double(ev.dur_ns) / n;
        }
      });
  return calls;
}

}  // namespace

std::vector<std::string> align_collective_io(std::vector<Input>& inputs, CollectiveIo& out) {
  bool ompio = std::all_of(inputs.begin(), inputs.end(), [](const Input& in) { return in.plan.job.mpi_io == "ompio"; });
  if (!ompio) return {};
  Moved written, read;
  std::vector<std::string> seen;
  uint64_t total = 0;
  for (const Input& in : inputs) {
    uint64_t calls = measure(in, written, read);
    total += calls;
    seen.push_back(fmt::format("{} at {} ranks", calls, in.n));
  }
  if (total == 0) return {};
  for (Input& in : inputs) drop_nested(in, starts_collective_transfer);
  out = {true, written.per_byte(), read.per_byte()};
  return {
      fmt::format("the POSIX calls Open MPI's OMPIO made inside collective reads and writes ({}) change with the "
                  "rank count: left out of every input, and dealt again as OMPIO deals them at the target",
                  fmt::join(seen, ", "))};
}

}  // namespace mpior::extrap
