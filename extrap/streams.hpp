// One stream class at the target rank count: every parameter of every
// position (and every loop's trip counts) fitted over (rank, rank count) by
// the exact models, item by item of its elastic sequence (the paper's two
// dimensions: the sequence holds the loop iterations, the model the ranks),
// evaluated for each target rank and merged back into rank variants; timing
// by the best-fitting model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "extrap/ambiguity.hpp"
#include "extrap/dealt.hpp"
#include "extrap/incidental.hpp"
#include "extrap/stream_classes.hpp"
#include "trace/model.hpp"

namespace mpior::extrap {

// What every stream's extrapolation shares.
struct StreamContext {
  const std::vector<Input>& inputs;
  const FileUses& uses;
  bool strict;                            // no approximation: incidentals need an exact fit too
  std::vector<trace::ExtrapNote>& notes;  // every quantity that is not one constant
  std::vector<std::string>& warnings;     // one per approximated position
  int64_t& terminal_approximated;         // ... but positions on a terminal stream: counted, one warning for all
  int64_t& messages_approximated;         // ... and point-to-point message sizes: counted, one warning for all
  DealtTables& dealt;                     // positions whose values a library dealt over the ranks
};

// The class's stream for `ranks` (ascending) of a run of n ranks. Notes get
// the model of every quantity that is not one constant, tagged with
// stream_index. An incidental quantity (incidental.hpp) no model fits takes
// the best fit, noted as approximate, with one warning per position naming
// the call, its file and the values seen. Throws ToolError naming the
// position, the parameter, the values seen and what input would resolve it
// when no model fits a structural quantity, or when a value is not an
// integer at n, or when models that fit it as exactly and as simply part at
// n (naming a rank count, from the class's ranks at other counts,
// `ranks_at`, that would decide).
trace::Stream extrapolate_stream(const StreamClass& cls, const StreamContext& ctx, const std::vector<int64_t>& ranks,
                                 int64_t n, int32_t stream_index, const RanksAt& ranks_at);

}  // namespace mpior::extrap
