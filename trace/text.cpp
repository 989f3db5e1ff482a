#include "trace/text.hpp"

#include <cmath>
#include <map>
#include <ostream>
#include <sstream>

#include "trace/value_seq.hpp"

namespace mpior::trace {
namespace {

void describe_range(std::ostream& o, std::span<const SeqItem> items, size_t begin, size_t end) {
  bool first = true;
  for (size_t i = begin; i < end;) {
    if (!first) o << ", ";
    first = false;
    const SeqItem& it = items[i];
    if (!it.is_loop()) {
      o << it.v;
      ++i;
      continue;
    }
    size_t body_end = i + 1 + it.span;
    bool simple = it.span == 1 && !items[i + 1].is_loop();
    if (simple && it.v == 0) {
      o << items[i + 1].v << " x" << it.count;
    } else if (simple) {
      o << items[i + 1].v << (it.v < 0 ? "" : "+") << it.v << "*i (x" << it.count << ")";
    } else {
      o << "{";
      describe_range(o, items, i + 1, body_end);
      o << "} x" << it.count;
      if (it.v) o << " by " << (it.v < 0 ? "" : "+") << it.v;
    }
    i = body_end;
  }
}

std::string describe_param(const Stream& s, const Param& p) {
  if (p.ranked < 0) return describe_seq(s.view(p.seq));
  std::string out = "<";
  bool first = true;
  for (const RankVariant& v : s.ranked[size_t(p.ranked)]) {
    if (!first) out += "; ";
    first = false;
    out += "ranks " + describe_seq(s.view(v.ranks), 40) + ": " + describe_seq(s.view(v.seq), 60);
    if (v.scale) out += (v.scale < 0 ? "" : "+") + std::to_string(v.scale) + "*rank";
  }
  return out + ">";
}

std::string fmt_ns(double ns) {
  std::ostringstream o;
  o.precision(3);
  if (ns < 1e3)
    o << ns << "ns";
  else if (ns < 1e6)
    o << ns / 1e3 << "us";
  else if (ns < 1e9)
    o << ns / 1e6 << "ms";
  else
    o << ns / 1e9 << "s";
  return o.str();
}

bool is_zero(const Param& p) { return p.ranked < 0 && p.seq.len == 0; }

// How many of a lossless position's calls kept their exact duration. A
// sequence of one value stands for every call (a constant is stored once),
// and so does none when every duration was 0 (a constant 0 is stored as
// nothing); none beside nonzero durations is a part folded without exact
// times (mixed timing modes).
uint64_t exact_calls(const Stream& s, const Leaf& l) {
  if (l.exact_dur.seq.len == 1) return l.dur.count();
  if (l.exact_dur.seq.len == 0) return l.dur.max() == 0 && l.dur.min() == 0 ? l.dur.count() : 0;
  return seq_length(s.view(l.exact_dur.seq));
}

void print_leaf(std::ostream& o, const Stream& s, const Leaf& l) {
  o << name(l.kind);
  if (l.depth) o << " depth=" << int(l.depth);
  if (l.flags & flag::on_behalf) o << " on-behalf";
  for (int i = 0; i < kNumArgs; ++i) {
    const Param& p = l.args[size_t(i)];
    if (!is_zero(p)) o << ' ' << arg_name(l.kind, i) << '=' << describe_param(s, p);
  }
  o << " ret=" << describe_param(s, l.ret);
  if (!is_zero(l.err)) o << " errno=" << describe_param(s, l.err);
  o << "  [gap " << fmt_ns(l.gap.mean());
  if (l.gap.count() > 1) o << "±" << fmt_ns(std::sqrt(l.gap.variance()));
  o << " dur " << fmt_ns(l.dur.mean());
  if (s.lossless && l.exact_dur.ranked < 0) o << ", " << exact_calls(s, l) << " of " << l.dur.count() << " exact";
  o << "]";
}

void print_nodes(std::ostream& o, const Stream& s, size_t begin, size_t end, int indent) {
  for (size_t i = begin; i < end;) {
    const Node& n = s.nodes[i];
    o << std::string(size_t(indent) * 2, ' ');
    if (n.loop) {
      o << "RSD x" << describe_param(s, n.iters) << " {\n";
      print_nodes(o, s, i + 1, i + 1 + n.index, indent + 1);
      o << std::string(size_t(indent) * 2, ' ') << "}\n";
      i += 1 + n.index;
    } else {
      print_leaf(o, s, s.leaves[n.index]);
      o << '\n';
      ++i;
    }
  }
}

}  // namespace

std::string placement_text(const CpuPlacement& p) {
  if (p.allowed <= 0) return "not known";
  if (p.bound()) return "bound to " + std::to_string(p.allowed) + " of " + std::to_string(p.online) + " CPUs";
  return "unbound (" + std::to_string(p.allowed) + " CPUs)";
}

std::string placement_summary(const std::vector<CpuPlacement>& placements) {
  std::map<std::string, int> placed;  // "bound to 1 of 2 CPUs" -> ranks
  for (const CpuPlacement& p : placements) ++placed[placement_text(p)];
  std::string list;
  for (const auto& [what, n] : placed)
    list += (list.empty() ? "" : "; ") + std::to_string(n) + (n == 1 ? " rank " : " ranks ") + what;
  return list;
}

std::string describe_seq(std::span<const SeqItem> items, size_t max_chars) {
  if (items.empty()) return "0";
  std::ostringstream o;
  describe_range(o, items, 0, items.size());
  std::string s = o.str();
  if (s.size() > max_chars) s = s.substr(0, max_chars) + "…";
  return s;
}

const char* arg_name(Kind k, int slot) {
  static const char* io[kNumArgs] = {"fd", "file", "off", "count", "flags", "mode", "file2", "fd2"};
  static const char* stdio[kNumArgs] = {"stream", "file", "off", "count", "flags", "mode", "file2", "fd"};
  static const char* mpi[kNumArgs] = {"comm", "peer", "tag", "bytes", "root", "req", "src", "stag"};
  static const char* sr[kNumArgs] = {"comm", "dest", "tag", "bytes", "source", "rtag", "src", "stag"};
  static const char* done[kNumArgs] = {"comm", "peer", "tag", "bytes", "kind", "req", "src", "stag"};
  static const char* create[kNumArgs] = {"comm", "peer", "tag", "bytes", "root", "newcomm", "src", "stag"};
  static const char* mpiio[kNumArgs] = {"fh", "file", "off", "bytes", "access", "comm", "req", "whence"};
  static const char* fopen[kNumArgs] = {"fh", "file", "off", "bytes", "access", "comm", "amode", "oflags"};
  static const char* view[kNumArgs] = {"fh", "file", "tile0", "ftsize", "access", "comm", "etsize", "extent"};
  static const char* aio[kNumArgs] = {"fd", "file", "off", "count", "op", "depth", "by_kind", "req"};
  static const char* map[kNumArgs] = {"fd", "file", "off", "count", "prot", "mflags", "len", "map"};
  static const char* copy[kNumArgs] = {"fd", "file", "off", "count", "flags", "off2", "file2", "fd2"};
  switch (info(k).op) {
    case OpClass::mpiio_open:
      return fopen[slot];
    case OpClass::mpiio_view:
      return view[slot];
    case OpClass::sendrecv:
      return sr[slot];
    case OpClass::complete:
      return done[slot];
    case OpClass::comm_create:
      return create[slot];
    case OpClass::copy:
      return copy[slot];
    default:
      break;
  }
  if (info(k).family == Family::stdio) return stdio[slot];
  if (is_mpiio(k)) return mpiio[slot];
  if (info(k).family == Family::aio) return aio[slot];
  if (info(k).family == Family::mmap) return map[slot];
  return is_io(k) ? io[slot] : mpi[slot];
}

void print_stream(std::ostream& out, const Stream& s) {
  size_t loops = 0;
  for (const Node& n : s.nodes) loops += n.loop;
  out << "stream thread " << s.thread << " ranks " << describe_seq(s.view(s.ranks)) << " (" << s.leaves.size()
      << " positions, " << loops << " loops" << (s.lossless ? ", lossless timing" : "") << ")\n";
  print_nodes(out, s, 0, s.nodes.size(), 1);
}

}  // namespace mpior::trace
