// One synthetic run as an extrapolation input: the ranks' traces, each with
// the program's command line, analysed and built into a plan.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "extrap/extrapolate.hpp"
#include "postproc/analyze.hpp"
#include "postproc/behalf.hpp"
#include "postproc/plan.hpp"
#include "test/postproc/fixture.hpp"
#include "trace/cursor.hpp"

namespace mpior::test {

inline extrap::Input input_of(std::vector<trace::RankTrace> ranks, const std::string& cmdline,
                              const std::string& name) {
  int64_t n = int64_t(ranks.size());
  for (trace::RankTrace& r : ranks) r.process.cmdline = cmdline;
  postproc::TraceSet set = make_set(std::move(ranks));
  set.job.cmdline = cmdline;
  postproc::Analysis a = postproc::analyze(set);
  postproc::move_sends_to_senders(set, a.comms);
  return {name, postproc::build_plan(std::move(set), a), n};
}

// The offset of rank's first call of `kind` moving `count` bytes (any, -1)
// in the plan, or -1.
inline int64_t first_offset(const trace::Plan& p, int32_t rank, trace::Kind kind, int64_t count = -1) {
  for (const trace::Stream& s : p.streams) {
    if (!trace::seq_contains(s.view(s.ranks), rank)) continue;
    trace::EventCursor c(s, rank);
    trace::Event ev;
    while (c.next(ev))
      if (ev.kind == kind && (count < 0 || ev.args[trace::arg::count] == count)) return ev.args[trace::arg::offset];
  }
  return -1;
}

}  // namespace mpior::test
