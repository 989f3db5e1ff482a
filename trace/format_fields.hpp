// Each record's description (record_io.hpp): fields(io, record) lists its
// fields in the order they are stored, for encoding and decoding alike.
// Records inside a stream take their value sequences from the stream's
// arena, which the stream's description passes on. Version numbers in
// io.since are the rank trace's (kFormatVersion), in plan records the
// plan's (format_plan.cpp). Internal to trace/.
#pragma once

#include <climits>
#include <string>
#include <utility>
#include <vector>

#include "trace/format_body.hpp"
#include "trace/record_io.hpp"

namespace mpior::trace::body {

// ---- streams ----------------------------------------------------------------

// A TimeStats as stored, whole (TimeStats::restore checks the parts together).
struct StatsParts {
  uint64_t count = 0;
  int64_t sum = 0, min = 0, max = 0;
  double mean = 0, m2 = 0;
};

template <class Io>
void fields(Io& io, StatsParts& s, std::vector<std::pair<uint8_t, uint64_t>>& hist) {
  io.uv(s.count);
  io.sv(s.sum);
  io.sv(s.min);
  io.sv(s.max);
  io.f64(s.mean);
  io.f64(s.m2);
  io.list(hist, 2, [&](std::pair<uint8_t, uint64_t>& bin) {
    io.u8(bin.first);
    io.uv(bin.second);
  });
}

// The merged job's form of a TimeStats, as stored: the mean is the sum over
// the count unless told, the spread max - min, m2 only when not 0 and in
// single precision (the spread it gives is printed to three digits, scaled
// by extrapolation: the histogram's bins are far coarser), the histogram,
// when shorter so, as the counts of the bins from min's to max's but the
// last (the count minus the others'), else (bin step, count) pairs; the sum
// last, as its difference from what the histogram's bin middles (within min
// and max) add up to: a byte or two instead of four or five.
struct CompactStats {
  enum Bits : uint8_t { kMeanTold = 1, kRange = 2, kM2Zero = 4 };
  uint64_t count = 0;
  int64_t min = 0;
  uint64_t spread = 0;  // max - min, wrapping: a damaged file must not overflow
  uint8_t bits = 0;
  double mean = 0;                                  // kMeanTold
  uint32_t m2 = 0;                                  // a float's bits, unless kM2Zero
  std::vector<uint64_t> run;                        // kRange: bins min's .. max's, but the last
  std::vector<std::pair<uint8_t, uint64_t>> steps;  // else: (bin - previous bin, count)
  int64_t sum_off = 0;                              // the sum less the histogram's estimate
  int64_t max() const { return int64_t(uint64_t(min) + spread); }
  bool has_run() const { return count > 1 && (bits & kRange); }
};

// The conversions between the two (format_body.cpp); the reader's one
// checks what the fields say together (bins within the count, in order).
CompactStats compact_of(const TimeStats& t);
TimeStats stats_of(const CompactStats& c, Decoder& d);

template <class Io>
void fields(Io& io, CompactStats& c) {
  io.uv(c.count);
  if (c.count == 0) return;
  io.sv(c.min);
  io.uv(c.spread);
  io.u8(c.bits);
  io.check([&](Decoder& d) {
    if (c.bits > (c.kMeanTold | c.kRange | c.kM2Zero)) d.fail("timing statistics flags " + std::to_string(c.bits));
    if (c.max() < c.min) d.fail("timing statistics whose maximum is below their minimum");
  });
  if (c.bits & c.kMeanTold) io.f64(c.mean);
  if (!(c.bits & c.kM2Zero)) io.fixed32(c.m2);
  if (c.has_run())
    io.each(c.run, size_t(TimeStats::bin_of(c.max()) - TimeStats::bin_of(c.min)), [&](uint64_t& n) { io.uv(n); });
  else if (c.count > 1)
    io.list(c.steps, 2, [&](std::pair<uint8_t, uint64_t>& bin) {
      io.u8(bin.first);
      io.uv(bin.second);
    });
  io.sv(c.sum_off);
}

// compact: the merged job's form.
template <class Io>
void stats(Io& io, TimeStats& t, bool compact) {
  if (compact) {
    CompactStats c;
    if constexpr (!Io::kReading) c = compact_of(t);
    fields(io, c);
    if constexpr (Io::kReading) t = stats_of(c, io.decoder());
    return;
  }
  if constexpr (Io::kReading) {
    StatsParts s;
    std::vector<std::pair<uint8_t, uint64_t>> hist;
    fields(io, s, hist);
    if (!TimeStats::restore(&t, s.count, s.sum, s.min, s.max, s.mean, s.m2, std::move(hist)))
      io.decoder().fail("inconsistent timing statistics");
  } else {
    StatsParts s{t.count(), t.sum(), t.min(), t.max(), t.mean(), t.m2()};
    fields(io, s, const_cast<std::vector<std::pair<uint8_t, uint64_t>>&>(t.histogram()));  // Put only reads
  }
}

// A value sequence of the stream's arena.
template <class Io>
void ref(Io& io, SeqRef& r, const SeqArena& arena) {
  io.uv(r.off);
  io.uv(r.len);
  io.check([&](Decoder& d) {
    if (uint64_t(r.off) + r.len > arena.items().size()) d.fail("value sequence outside its stream");
    if (!seq_valid(arena.view(r))) d.fail("malformed value sequence");
  });
}

template <class Io>
void fields(Io& io, Param& p, const Stream& s) {
  ref(io, p.seq, s.values);
  io.sv_in(p.ranked, -1, INT32_MAX, "bad rank-variant index");
}

template <class Io>
void fields(Io& io, Leaf& l, const Stream& s, bool compact) {
  io.enum_uv(l.kind, kNumKinds, "unknown event kind");
  io.u8(l.depth);
  io.u8(l.flags);
  io.uv(l.callsite);
  for (Param& p : l.args) fields(io, p, s);
  fields(io, l.ret, s);
  fields(io, l.err, s);
  stats(io, l.gap, compact);
  stats(io, l.dur, compact);
  if (s.lossless) {
    fields(io, l.exact_gap, s);
    fields(io, l.exact_dur, s);
  }
}

template <class Io>
void fields(Io& io, Stream& s, bool compact) {
  io.uv(s.thread);
  io.u8(s.lossless);
  io.uv(s.ranks.off);  // checked once the values are read
  io.uv(s.ranks.len);
  auto& items = s.values.items();
  io.list(items, 3, [&](SeqItem& it) {
    io.sv(it.v);
    io.uv(it.count);
    io.uv(it.span);
  });
  io.check([&](Decoder& d) {
    if (uint64_t(s.ranks.off) + s.ranks.len > items.size() || s.ranks.len == 0) d.fail("stream without a rank list");
    if (!seq_valid(s.values.view(s.ranks))) d.fail("a stream's rank list is malformed");
  });
  io.list(s.nodes, 2, [&](Node& n) {
    io.u8(n.loop);
    io.uv(n.index);
    if (n.loop) fields(io, n.iters, s);
  });
  io.list(s.leaves, 20, [&](Leaf& l) { fields(io, l, s, compact); });
  io.list(s.ranked, 1, [&](std::vector<RankVariant>& variants) {
    io.list(variants, 5, [&](RankVariant& v) {
      ref(io, v.ranks, s.values);
      ref(io, v.seq, s.values);
      io.sv(v.scale);
    });
  });
  io.check([&](Decoder& d) { check_stream(d, s); });
}

template <class Io>
void fields(Io& io, std::vector<Stream>& v, bool compact) {
  io.list(v, 8, [&](Stream& s) { fields(io, s, compact); });
}

// ---- tables and headers -----------------------------------------------------

// A kind's tally, by name: kind numbers may change between versions.
struct NamedTally {
  std::string name;
  KindTally tally;
};

// The kinds with calls.
template <class Io>
void fields(Io& io, KindTallies& t) {
  std::vector<NamedTally> used;
  if constexpr (!Io::kReading)
    for (size_t i = 0; i < t.size(); ++i)
      if (t[i].calls) used.push_back({std::string(name(Kind(i))), t[i]});
  io.list(used, 3, [&](NamedTally& n) {
    io.str(n.name);
    io.check([&](Decoder& d) {
      if (!kind_from_name(n.name)) d.fail("unknown event kind '" + n.name + "'");
    });
    io.uv(n.tally.calls);
    io.sv(n.tally.time_ns);
  });
  if constexpr (Io::kReading) {
    t = {};
    for (const NamedTally& n : used) t[size_t(*kind_from_name(n.name))] = n.tally;
  }
}

template <class Io>
void ranks(Io& io, std::vector<int32_t>& v) {
  io.list(v, 1, [&](int32_t& r) { io.sv(r); });
}

template <class Io>
void fields(Io& io, FileEntry& f) {
  io.str(f.path);
  io.sv(f.flags);
}

template <class Io>
void fields(Io& io, CommEntry& c) {
  io.sv(c.id);
  io.enum8(c.origin, CommOrigin::graph, "unknown communicator origin");
  io.sv(c.parent);
  io.uv(c.parent_seq);
  io.sv(c.color);
  io.sv(c.key);
  ranks(io, c.members);
}

template <class Io>
void fields(Io& io, CpuPlacement& p) {
  io.sv_in(p.allowed, 0, INT32_MAX, "CPU placement out of range");
  io.sv_in(p.online, 0, INT32_MAX, "CPU placement out of range");
}

// Version numbers: the rank trace's (kFormatVersion).
template <class Io>
void fields(Io& io, ProcessInfo& p) {
  io.fixed64(p.job_id);
  io.sv(p.rank);
  io.sv(p.size);
  io.bits(p.mpi, p.pruning);
  io.u8(p.finished);
  io.sv(p.pid);
  io.str(p.host);
  io.str(p.exe);
  io.str(p.cmdline);
  io.str(p.cwd);
  io.sv(p.clock_mono_ns);
  io.sv(p.clock_real_ns);
  io.sv(p.end_ns);
  if (io.since(4)) io.sv(p.clock_offset_ns);
  if (io.since(5)) io.sv_in(p.cpu_wait_ns, 0, INT64_MAX, "negative wait for a CPU");
  if (io.since(6)) fields(io, p.placement);
  io.check([&](Decoder& d) {
    if (p.size < 1 || p.rank < 0 || p.rank >= p.size)
      d.fail("rank " + std::to_string(p.rank) + " of " + std::to_string(p.size));
  });
}

// A rank trace is its head (process, file table), its communicator table,
// its tail (streams, tallies, spill segments): EncodedComms writes the
// table between the two itself.
template <class Io>
void head(Io& io, RankTrace& t) {
  fields(io, t.process);
  io.list(t.files, 2, [&](FileEntry& f) { fields(io, f); });
}

template <class Io>
void tail(Io& io, RankTrace& t) {
  fields(io, t.streams, false);
  fields(io, t.pruned);
  fields(io, t.excluded);
  io.uv(t.spill_segments);
  if (io.since(7)) fields(io, t.unrecorded);
  if (io.since(8))
    io.list(t.journaled, 2, [&](JournalMark& m) {
      io.uv(m.thread);
      io.uv(m.events);
    });
}

template <class Io>
void fields(Io& io, RankTrace& t) {
  head(io, t);
  io.list(t.comms, 7, [&](CommEntry& c) { fields(io, c); });
  tail(io, t);
}

template <class Io>
void fields(Io& io, JobInfo& j) {
  io.fixed64(j.job_id);
  io.sv(j.size);
  io.enum8(j.state, JobState::complete, "unknown job state");
  io.str(j.cmdline);
  io.str(j.cwd);
  io.str(j.host);
  io.sv(j.start_real_ns);
  ranks(io, j.ranks_written);
  // 9 in both the job file's and the plan's numbering.
  if (io.since(9)) {
    io.str(j.mpi_library);
    io.str(j.mpi_io);
  }
  // 10 likewise: the traced MPI-IO hints and OMPIO's forced component.
  if (io.since(10)) {
    io.str(j.ompio_fcoll);
    io.list(j.mpiio_hints, 2, [&](MpiioHintSet& s) {
      io.str(s.path);
      io.list(s.hints, 3, [&](MpiioHint& h) {
        io.str(h.key);
        io.str(h.value);
        io.bits(h.given);
      });
    });
    io.uv(j.mpiio_hint_sets_dropped);
  }
  io.check([&](Decoder& d) {
    if (j.size < 1) d.fail("job of " + std::to_string(j.size) + " ranks");
  });
}

// The job record's layout (JobInfo::trace_files); ranks checked below size.
template <class Io>
void layout(Io& io, std::vector<TraceFileRanks>& files, int32_t size) {
  io.list(files, 2, [&](TraceFileRanks& f) {
    io.str(f.name);
    io.check([&](Decoder& d) {
      if (f.name.empty() || f.name.find('/') != std::string::npos) d.fail("bad trace file name in the job layout");
    });
    ranks(io, f.ranks);
    io.check([&](Decoder& d) {
      for (int32_t r : f.ranks)
        if (r < 0 || r >= size) d.fail(f.name + ": rank " + std::to_string(r) + " outside the job");
    });
  });
}

// The job file: the record, then its layout when there is one.
template <class Io>
void job_file(Io& io, JobInfo& j) {
  fields(io, j);
  io.optional_tail(j.trace_files, [&] { layout(io, j.trace_files, j.size); });
}

template <class Io>
void fields(Io& io, SpillSegment& s) {
  io.sv(s.rank);
  io.uv(s.seq);
  fields(io, s.stream, false);
}

// A record run through its description one way or the other, at format
// version V (the rank trace's unless told); `a` are the description's further
// arguments (streams: compact or not).
template <uint32_t V = kFormatVersion, class T, class... A>
void put_fields(Encoder& e, const T& r, const A&... a) {
  Put io(e, V);
  fields(io, const_cast<T&>(r), a...);  // Put only reads
}
template <class T, uint32_t V = kFormatVersion, class... A>
T get_fields(Decoder& d, const A&... a) {
  Get io(d, V);
  T r{};
  fields(io, r, a...);
  return r;
}

}  // namespace mpior::trace::body
