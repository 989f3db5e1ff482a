#include "postproc/analyze.hpp"

#include "postproc/post_progress.hpp"
#include "postproc/rank_events.hpp"
#include "postproc/scope.hpp"
#include "postproc/trace_set.hpp"
#include "trace/tool_error.hpp"

namespace mpior::postproc {

namespace {

constexpr size_t kListedUnreceived = 10;

void scan_rank(const TraceSet& set, int32_t r, Analysis& a, MessageMatcher& matcher, CollectiveChecker& collectives,
               SummaryCollector& summary) {
  const trace::RankTrace& t = set.ranks[size_t(r)];
  RankScope scope(r, set.path(r), a.files.local_to_global[size_t(r)], a.comms);
  std::vector<uint32_t> threads;
  for (const trace::Stream& s : t.streams) threads.push_back(s.thread);
  scope.set_threads(std::move(threads));
  scope.set_clock_base(t.process.clock_mono_ns + t.process.clock_offset_ns);
  if (!t.process.mpi) a.files.clocks_aligned = false;
  matcher.begin_rank(scope);
  summary.begin_rank(scope, t);
  RankEvents events(t, r);
  trace::Event ev;
  EventPos pos;
  trace::LevelTracker levels;  // the POSIX calls under an MPI-IO call are what the file system saw
  while (events.next(ev, pos)) {
    trace::Level level = levels.observe(r, ev);
    if (trace::is_io(ev.kind)) {
      note_file_use(a.files, scope, ev, pos, level);
    } else {
      matcher.observe(ev, pos);
      collectives.observe(scope, ev, pos);
      note_meeting(a.files, scope, ev, pos);
    }
    summary.observe(scope, ev, pos);
  }
  end_rank_files(a.files, scope);
  matcher.end_rank();
}

void warn_unreceived(const TraceSet& set, Analysis& a) {
  const PairingStats& m = a.messages;
  size_t listed = 0;
  for (const ChannelCount& c : m.unreceived_channels) {
    if (++listed > kListedUnreceived) break;
    a.warnings.push_back("rank " + std::to_string(c.channel.source) + " sent " + std::to_string(c.sent) +
                         " messages to rank " + std::to_string(c.channel.dest) + " on communicator " +
                         std::to_string(c.channel.comm) + " with tag " + std::to_string(c.channel.tag) + ", " +
                         std::to_string(c.sent - c.received) + " never received (" + set.path(c.channel.dest) + ")");
  }
  if (m.unreceived_channels.size() > kListedUnreceived)
    a.warnings.push_back("... and sends never received on " +
                         std::to_string(m.unreceived_channels.size() - kListedUnreceived) + " more channels");
}

}  // namespace

Analysis analyze(const TraceSet& set, PairSink sink) {
  Analysis a;
  a.warnings = set.warnings;
  a.comms = resolve_comms(set);
  a.files = number_files(set);
  MessageMatcher matcher(set, std::move(sink));
  CollectiveChecker collectives(set, a.comms);
  SummaryCollector summary(size_t(set.size()), a.files.files.size());
  for (int32_t r = 0; r < set.size(); ++r) {
    report_progress("analysing ranks", uint64_t(r), uint64_t(set.size()));
    scan_rank(set, r, a, matcher, collectives, summary);
  }
  finish_files(a.files);
  const bool ended = complete(set);
  auto matched = [&](auto finish) {
    try {
      finish();
    } catch (const ToolError& e) {
      if (ended) throw;
      if (a.unmatched.empty()) a.unmatched = e.what();
    }
  };
  matched([&] { a.collectives = collectives.finish(); });
  matched([&] { a.messages = matcher.finish(); });
  a.summary = summary.take();
  warn_unreceived(set, a);
  return a;
}

}  // namespace mpior::postproc
