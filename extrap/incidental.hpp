// Structure or incidental: which quantities of a plan must follow a model
// exactly and which may take the registry's best fit.
//
// Structure (the call sequence, trip counts, the files the job makes and
// their names, offsets and sizes on data files, peers, roots, communicators)
// decides what a replay at the target does, and a wrong value there is a
// wrong replay: it keeps the exact fit. Incidentals are bytes that depend on
// data or the machine and that nothing later in the plan depends on:
//   - the bytes a stdio stream writes to a file the job never reads back
//     (a dump gathered to one rank: a chunk's size follows the data);
//   - the bytes of formatted stdio (printf, fputs, fgets...: the length of a
//     printed time or checksum) and the stream offsets they move (every call
//     on a file that formatted stdio writes: stdout, stderr, logs);
//   - return values of calls that move no data (an MPI call's, a close's);
//   - offsets, sizes and results of calls on files the job neither created
//     nor wrote (system, configuration and library files the MPI library
//     reads), and those files' names and sizes.
// The class is decided from what the trace knows (who made or wrote a file,
// which call), never from a file's name.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "extrap/stream_classes.hpp"
#include "trace/model.hpp"

namespace mpior::extrap {

// Rank r's values of p in s: a sequence and the offset added to its scalars.
std::pair<std::span<const trace::SeqItem>, int64_t> rank_view(const trace::Stream& s, const trace::Param& p, int64_t r);

// What the job did to each file of each input.
class FileUses {
 public:
  explicit FileUses(const std::vector<Input>& inputs);

  // Why argument `slot` (-1: the return value) of position `leaf` of the
  // class is incidental, or nullptr when it is structure.
  const char* incidental(const StreamClass& cls, size_t leaf, int slot) const;
  // The path of the file the position names (its first, in the largest
  // input), or "" when it names none.
  std::string path(const StreamClass& cls, size_t leaf) const;
  // True when every file the position names is <stdin>, <stdout> or
  // <stderr>: a program's printed report, whose bytes follow the values
  // printed, not its I/O.
  bool terminal_only(const StreamClass& cls, size_t leaf) const;
  // True when no rank of input `in` created or wrote global file `file`.
  bool foreign(size_t in, int32_t file) const { return !uses_[in][size_t(file)].made; }

 private:
  struct Use {
    bool made = false;  // created, or written by some call
    bool text = false;  // written by formatted stdio
    bool read = false;  // read back by some call
  };
  // The global files a position names, over every rank of every input.
  std::vector<std::pair<size_t, int32_t>> files_of(const StreamClass& cls, size_t leaf) const;

  const std::vector<Input>& inputs_;
  std::vector<std::vector<Use>> uses_;  // per input, per global file
};

}  // namespace mpior::extrap
