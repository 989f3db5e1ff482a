#include "trace/spill_reader.hpp"

#include <sys/stat.h>

#include <map>

#include "trace/format.hpp"

namespace mpior::trace {
namespace {

Param copy_param(const Param& p, const Stream& src, Stream& dst) {
  if (p.ranked >= 0) throw FormatError("spilled stream with rank variants");
  return {p.seq.len ? dst.values.add(src.view(p.seq)) : SeqRef{}, -1};
}

}  // namespace

void append_stream(Stream& dst, const Stream& src) {
  const uint32_t base = uint32_t(dst.leaves.size());
  dst.nodes.reserve(dst.nodes.size() + src.nodes.size());
  for (const Node& n : src.nodes) {
    Node c = n;
    if (n.loop)
      c.iters = copy_param(n.iters, src, dst);
    else
      c.index = n.index + base;
    dst.nodes.push_back(c);
  }
  dst.leaves.reserve(dst.leaves.size() + src.leaves.size());
  for (const Leaf& l : src.leaves) {
    Leaf c = l;
    for (size_t i = 0; i < l.args.size(); ++i) c.args[i] = copy_param(l.args[i], src, dst);
    c.ret = copy_param(l.ret, src, dst);
    c.err = copy_param(l.err, src, dst);
    c.exact_gap = copy_param(l.exact_gap, src, dst);
    c.exact_dur = copy_param(l.exact_dur, src, dst);
    dst.leaves.push_back(c);
  }
}

RankTrace read_rank_trace_with_spill(const std::string& dir, int32_t rank, std::vector<std::string>* warnings) {
  RankTrace t = read_rank_trace(dir + "/" + rank_file_name(rank));
  std::string path = dir + "/" + spill_file_name(rank);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (t.spill_segments)
      warnings->push_back(path + ": missing; the first " + std::to_string(t.spill_segments) +
                          " spilled parts of rank " + std::to_string(rank) + "'s trace are lost");
    return t;
  }
  std::string damage;
  std::vector<SpillSegment> segs = decode_spill(read_file(path), path, &damage);
  if (!damage.empty()) warnings->push_back(damage);
  if (segs.size() < t.spill_segments)
    warnings->push_back(path + ": " + std::to_string(segs.size()) + " of the " + std::to_string(t.spill_segments) +
                        " segments the rank file follows are readable; the events of the others are lost");
  if (segs.size() > t.spill_segments) segs.resize(t.spill_segments);  // appended after the rank file was written
  std::map<uint32_t, Stream> joined;  // per thread: its segments in order, then the rank file's stream
  for (SpillSegment& s : segs) {
    if (s.rank != rank)
      throw FormatError(path + ": segment " + std::to_string(s.seq) + " is rank " + std::to_string(s.rank) + "'s");
    auto [it, fresh] = joined.try_emplace(s.stream.thread);
    if (fresh) {
      it->second = std::move(s.stream);
      continue;
    }
    append_stream(it->second, s.stream);
  }
  if (joined.empty()) return t;
  for (Stream& s : t.streams) {
    auto it = joined.find(s.thread);
    if (it == joined.end()) continue;
    append_stream(it->second, s);
    it->second.ranks = it->second.values.add(s.view(s.ranks));
    s = std::move(it->second);
    joined.erase(it);
  }
  for (auto& [thread, s] : joined) t.streams.push_back(std::move(s));  // a thread whose rest is empty
  return t;
}

}  // namespace mpior::trace
