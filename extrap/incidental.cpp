#include "extrap/incidental.hpp"

#include <algorithm>

#include "merge/merge_params.hpp"
#include "trace/arg_views.hpp"

namespace mpior::extrap {

namespace {

using trace::OpClass;
constexpr trace::SeqItem kZero{0, 0, 0};

// Text in or out of a stream: how many bytes depends on the data printed or
// read (a time, a checksum, a line of a configuration file).
bool formatted(trace::Kind k) { return trace::has_fact(k, trace::fact::text); }

bool names_file(trace::Kind k) { return trace::has_fact(k, trace::fact::names_file); }

// Calls that may change a file's contents or size (asynchronous and mapped
// I/O counted as writes: a file they touch stays structure).
bool writes(OpClass op) {
  switch (op) {
    case OpClass::write:
    case OpClass::truncate:
    case OpClass::allocate:
    case OpClass::copy:
    case OpClass::asubmit:
    case OpClass::alist:
    case OpClass::map:
    case OpClass::msync:
    case OpClass::mpiio_write:
    case OpClass::mpiio_size:
      return true;
    default:
      return false;
  }
}

// Calls that bring a file's bytes back into the job.
bool reads(OpClass op) { return op == OpClass::read || op == OpClass::mpiio_read || op == OpClass::map; }

// A stdio stream's write: the replay writes its bytes where the stream
// stands, so its recorded offset decides nothing.
bool stream_write(trace::Kind k) {
  return trace::info(k).family == trace::Family::stdio && trace::info(k).op == OpClass::write;
}

// Calls whose result is data the replay moves or a position it moves to.
bool moves_data(OpClass op) {
  switch (op) {
    case OpClass::read:
    case OpClass::seek:
    case OpClass::tell:
    case OpClass::atest:
    case OpClass::await:
    case OpClass::adone:
    case OpClass::mpiio_read:
    case OpClass::mpiio_seek:
    case OpClass::readdir:
      return true;
    default:
      return writes(op);
  }
}

// Point-to-point calls: the replay sends the sender's bytes and receives
// whatever arrives, so a message's size sets only its cost, never what the
// replay does. A halo's size follows the data (atoms that crossed a
// boundary) and no model of the rank count fits it exactly.
bool point_to_point(trace::Kind k) {
  if (!trace::is_mpi(k)) return false;
  switch (trace::info(k).op) {
    case OpClass::send:
    case OpClass::isend:
    case OpClass::recv:
    case OpClass::irecv:
    case OpClass::sendrecv:
    case OpClass::pinit:
    case OpClass::wait:
    case OpClass::test:
      return true;
    default:
      return false;
  }
}

// The values of a file call that follow the file's data: where the call
// starts, how many bytes it asks for, and its return value (slot -1).
bool data_slot(int slot) { return slot == trace::arg::offset || slot == trace::arg::count || slot < 0; }

}  // namespace

std::pair<std::span<const trace::SeqItem>, int64_t> rank_view(const trace::Stream& s, const trace::Param& p,
                                                              int64_t r) {
  if (p.ranked < 0) return {merge::canonical_seq(s, p), 0};
  for (const trace::RankVariant& v : s.ranked[size_t(p.ranked)])
    if (trace::seq_contains(s.view(v.ranks), r))
      return {v.seq.len ? s.view(v.seq) : std::span<const trace::SeqItem>(&kZero, 1), v.scale * r};
  return {{&kZero, 1}, 0};
}

FileUses::FileUses(const std::vector<Input>& inputs) : inputs_(inputs) {
  for (const Input& in : inputs) {
    std::vector<Use> uses(in.plan.files.size());
    for (size_t f = 0; f < uses.size(); ++f) uses[f].made = in.plan.files[f].created;
    for (const trace::Stream& s : in.plan.streams)
      for (const trace::Leaf& l : s.leaves) {
        OpClass op = trace::info(l.kind).op;
        bool w = writes(op), text = w && formatted(l.kind), rd = reads(op);
        if (!(w || rd) || !names_file(l.kind)) continue;
        for (int64_t r : s.rank_list()) {
          auto [items, shift] = rank_view(s, io_args(l).file(), r);
          const std::vector<int32_t>& local = in.plan.ranks[size_t(r)].files;
          for (int64_t id : trace::seq_expand(items)) {
            id += shift;
            if (id < 0 || size_t(id) >= local.size() || local[size_t(id)] < 0) continue;
            Use& u = uses[size_t(local[size_t(id)])];
            u.made = u.made || w;
            u.text = u.text || text;
            u.read = u.read || rd;
          }
        }
      }
    uses_.push_back(std::move(uses));
  }
}

std::vector<std::pair<size_t, int32_t>> FileUses::files_of(const StreamClass& cls, size_t leaf) const {
  std::vector<std::pair<size_t, int32_t>> out;
  for (size_t in = 0; in < cls.at.size(); ++in)
    for (const trace::Stream* s : cls.at[in])
      for (int64_t r : s->rank_list()) {
        auto [items, shift] = rank_view(*s, io_args(s->leaves[leaf]).file(), r);
        const std::vector<int32_t>& local = inputs_[in].plan.ranks[size_t(r)].files;
        for (int64_t id : trace::seq_expand(items)) {
          id += shift;
          if (id >= 0 && size_t(id) < local.size() && local[size_t(id)] >= 0)
            if (std::find(out.begin(), out.end(), std::make_pair(in, local[size_t(id)])) == out.end())
              out.emplace_back(in, local[size_t(id)]);
        }
      }
  return out;
}

const char* FileUses::incidental(const StreamClass& cls, size_t leaf, int slot) const {
  trace::Kind kind = cls.shape->leaves[leaf].kind;
  OpClass op = trace::info(kind).op;
  if (slot < 0 && !moves_data(op)) return "a return value of a call that moves no data";
  if (slot == trace::arg::bytes && point_to_point(kind)) return "the size of a point-to-point message";
  if (!names_file(kind) || !data_slot(slot)) return nullptr;
  if (formatted(kind)) return "bytes of formatted stdio";
  std::vector<std::pair<size_t, int32_t>> files = files_of(cls, leaf);
  if (files.empty()) return nullptr;
  if (std::all_of(files.begin(), files.end(), [&](auto& f) { return !uses_[f.first][size_t(f.second)].made; }))
    return "a call on a file the job neither created nor wrote";
  // A file the job writes while it reads: when the ranks' writes land, the
  // read finds the bytes there or not (ROMIO's read-modify-write of a
  // collective write). Fitted exactly where it can be; else a best fit.
  if (slot < 0 && op == OpClass::read) return "bytes a read found in a file the job writes meanwhile";
  bool text = std::any_of(files.begin(), files.end(), [&](auto& f) { return uses_[f.first][size_t(f.second)].text; });
  if (text && slot == trace::arg::offset) return "a stream offset that formatted stdio moves";
  // A dump of atoms or particles gathered to one rank: each chunk's size
  // follows the data (how many atoms a rank held), and nothing the job does
  // later depends on it.
  if (stream_write(kind) &&
      std::none_of(files.begin(), files.end(), [&](auto& f) { return uses_[f.first][size_t(f.second)].read; }))
    return "bytes a stdio stream writes to a file the job never reads";
  return nullptr;
}

std::string FileUses::path(const StreamClass& cls, size_t leaf) const {
  if (!names_file(cls.shape->leaves[leaf].kind)) return "";
  std::vector<std::pair<size_t, int32_t>> files = files_of(cls, leaf);
  if (files.empty()) return "";
  auto last = std::max_element(files.begin(), files.end(), [](auto& a, auto& b) { return a.first < b.first; });
  return inputs_[last->first].plan.files[size_t(last->second)].path;
}

bool FileUses::terminal_only(const StreamClass& cls, size_t leaf) const {
  if (!names_file(cls.shape->leaves[leaf].kind)) return false;
  std::vector<std::pair<size_t, int32_t>> files = files_of(cls, leaf);
  return !files.empty() && std::all_of(files.begin(), files.end(), [&](auto& f) {
    const std::string& p = inputs_[f.first].plan.files[size_t(f.second)].path;
    return p == "<stdin>" || p == "<stdout>" || p == "<stderr>";
  });
}

}  // namespace mpior::extrap
