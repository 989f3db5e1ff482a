// `mpior-post --dump FILE`: any mpior file (rank trace, job, plan) as text —
// the container header, the tables, and every stream with its loops.
#pragma once

#include <iosfwd>
#include <string>

namespace mpior::postproc {

// Throws trace::FormatError naming the file when it is not a readable mpior file.
void dump_file(const std::string& path, std::ostream& out);

}  // namespace mpior::postproc
