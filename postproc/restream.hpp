// Rebuilding a stream event by event (file ids renumbered, sends moved in, a
// stream continued by the next program's) without moving its events in time.
//
// A statistical stream keeps each position's timing as statistics, not one
// value per occurrence. Events drawn from those statistics put each loop's
// total, and so everything after it, off by the sum of the draws' errors: a
// child's calls would leave their place on the parent's time line. Events at
// each position's mean keep every total, and the rebuilt positions then take
// back the statistics of the positions whose occurrences they hold.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/builder.hpp"
#include "trace/cursor.hpp"
#include "trace/model.hpp"

namespace mpior::postproc {

class Restream {
 public:
  explicit Restream(bool lossless);

  // How to read a source: each position's mean (exact values when lossless).
  static trace::CursorOptions cursor_options() { return {}; }
  // The events of `s`, read for `rank` with cursor_options(), follow, each
  // passed to copy() in the order the cursor gives them.
  void begin(const trace::Stream& s, int32_t rank);
  void copy(const trace::RawEvent& ev);
  // An event of no source (a send moved in): its own times make its timing.
  void insert(const trace::RawEvent& ev);
  trace::Stream finish(int32_t rank, uint32_t thread);

  // One source: its stream and rank, its positions' index among all sources'.
  struct Source {
    const trace::Stream* stream;
    int32_t rank;
    uint32_t leaf_base;
  };

 private:
  void restore_timing(trace::Stream& out, int32_t rank) const;

  bool lossless_;
  trace::StreamBuilder builder_;
  std::vector<Source> sources_;
  uint64_t appended_ = 0;
  std::vector<uint64_t> inserted_;  // which of the events appended insert() appended
};

}  // namespace mpior::postproc
