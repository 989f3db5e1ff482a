// A complete trace directory in memory: the job record and every rank's trace,
// checked to belong together before anything else looks at them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trace/model.hpp"

namespace mpior::postproc {

// Trailing collectives completed for a rank that died inside them
// (entered_collectives.hpp), per rank and communicator.
struct EnteredCollectives {
  int32_t rank = 0;
  int32_t comm = 0;   // global communicator id
  int32_t donor = 0;  // the member whose calls they copy
  uint64_t calls = 0;
  std::string call;  // the first one's name
};

struct TraceSet {
  std::string dir;
  trace::JobInfo job;
  std::vector<trace::RankTrace> ranks;      // index = world rank
  std::vector<std::string> paths;           // the file each rank came from
  std::vector<std::string> warnings;        // worth telling, not worth stopping for
  size_t children = 0;                      // processes ranks started, folded in as threads (children.hpp)
  std::vector<int32_t> missing;             // ranks without a trace (MissingRanks::keep): empty placeholders
  std::vector<EnteredCollectives> entered;  // completed collectives (entered_collectives.hpp)

  int32_t size() const { return int32_t(ranks.size()); }
  const std::string& path(int32_t rank) const { return paths[size_t(rank)]; }
};

// Reads DIR/job.mpior and every rank's trace: from the aggregate files the
// job wrote at finalize (ranks.mpior, ranks-NNNNNN.mpior: trace/format_aggregate.hpp)
// and from DIR/rank-NNNNNN.mpior for the others (a finished rank file wins
// over an aggregate's entry, an aggregate's over an unfinished flush); throws
// ToolError (or trace::FormatError) naming the file(s) when the set is not one
// complete run.
// With MissingRanks::keep, a rank no file holds (a process killed before
// its first flush) is an empty placeholder listed in `missing`, with a
// warning naming its file, instead of an error.
enum class MissingRanks { refuse, keep };
TraceSet read_trace_dir(const std::string& dir, MissingRanks missing = MissingRanks::refuse);
// "1, 3, 5" (the first 16, then "and N more").
std::string rank_list(const std::vector<int32_t>& ranks);

// The encoded trace of rank held in an aggregate file of dir, named "FILE
// (rank N)"; nullopt when none holds it (mpior-post --dump of a rank file
// the aggregation replaced).
std::optional<std::pair<std::string, std::vector<uint8_t>>> held_rank(const std::string& dir, int32_t rank);

// The consistency checks read_trace_dir applies, for sets built in memory.
// Fills paths with "<memory rank N>" when empty.
void check_trace_set(TraceSet& set);

// The job reached its end: marked complete and every rank's trace finished.
bool complete(const TraceSet& set);

// "0x1a2b" style, as messages print job ids.
std::string job_id_text(uint64_t id);

}  // namespace mpior::postproc
