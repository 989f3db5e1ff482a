// The MPI library's own I/O. The calls nested in MPI_Init and MPI_Finalize
// read the library's configuration, scan its components and discover the
// node, and which of them run depends on the run, not on the program:
// Open MPI's rank 0 discovers the node's topology itself at 3 ranks and takes
// it from the launcher at 2. When those nested calls differ between the
// inputs, no input's structure can match another's. They then leave every
// input's streams (their time stays in the MPI call's duration), and the
// files only they named leave the ranks' tables.
// Nested calls that every input makes alike stay: they are the program's to
// replay.
#pragma once

#include <string>
#include <vector>

#include "extrap/stream_classes.hpp"
#include "trace/cursor.hpp"

namespace mpior::extrap {

// Whether an event opens a call whose nested calls are the library's.
using NestStart = bool (*)(const trace::Event&);

// Tells, event by event along one rank's stream, whether a call `starts`
// accepts nests it.
class Nesting {
 public:
  explicit Nesting(NestStart starts) : starts_(starts) {}
  bool nested(const trace::Event& ev) {
    if (inside_below_ >= 0 && ev.depth <= inside_below_) inside_below_ = -1;
    bool inside = inside_below_ >= 0;
    if (!inside && starts_(ev)) inside_below_ = ev.depth;
    return inside;
  }

 private:
  NestStart starts_;
  int inside_below_ = -1;  // depth of the call whose nested events follow
};

// Walks one rank's stream, telling each event whether a call `starts`
// accepts nests it.
template <typename Visit>
void walk_nested(const trace::Stream& s, int64_t rank, NestStart starts, Visit visit) {
  trace::EventCursor c(s, int32_t(rank));
  trace::Event ev;
  Nesting nesting(starts);
  while (c.next(ev)) visit(ev, nesting.nested(ev));
}

// Each rank's streams again without the events nested in the calls `starts`
// accepts, and its file table without the files only those events named.
void drop_nested(Input& in, NestStart starts);

// One warning when the nested calls were left out, none otherwise.
std::vector<std::string> align_library_io(std::vector<Input>& inputs);

}  // namespace mpior::extrap
