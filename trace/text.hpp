// Readable text of streams and value sequences, showing the loop structure:
//   RSD x1000 { pwrite fd=3 off=0+4096*i count=4096 ; MPI_Barrier comm=0 }
#pragma once

#include <iosfwd>
#include <span>
#include <string>

#include "trace/model.hpp"

namespace mpior::trace {

// A value sequence in short form: "7", "0+4096*i (x1000)", "[3, {1+2*i x4} x2]".
std::string describe_seq(std::span<const SeqItem> items, size_t max_chars = 80);
// Argument slot names for a kind ("fd", "off", ... or "comm", "peer", ...).
const char* arg_name(Kind k, int slot);
// "bound to 1 of 2 CPUs", "unbound (2 CPUs)", "not known".
std::string placement_text(const CpuPlacement& p);
// Ranks' placements grouped: "2 ranks bound to 1 of 2 CPUs; 1 rank unbound (2 CPUs)" (empty: no ranks).
std::string placement_summary(const std::vector<CpuPlacement>& placements);
// The stream's tree, one position per line, loops indented.
void print_stream(std::ostream& out, const Stream& s);

}  // namespace mpior::trace
