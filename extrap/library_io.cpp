#include "extrap/library_io.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "merge/rebuild.hpp"
#include "trace/arg_views.hpp"
#include "trace/builder.hpp"
#include "trace/cursor.hpp"

namespace mpior::extrap {

namespace {

using trace::OpClass;
using Call = std::tuple<trace::Kind, uint64_t, uint8_t>;   // kind, call site, depth
using Signature = std::pair<uint32_t, std::vector<Call>>;  // thread, the calls nested in MPI_Init/Finalize

bool starts_library_io(const trace::Event& ev) { return ev.op() == OpClass::init || ev.op() == OpClass::finalize; }

// Each rank's signature, by rank.
std::vector<Signature> signatures(const Input& in, size_t& most) {
  std::vector<Signature> out(size_t(in.n));
  for (const trace::Stream& s : in.plan.streams)
    for (int64_t r : s.rank_list()) {
      Signature sig{s.thread, {}};
      walk_nested(s, r, starts_library_io, [&](const trace::Event& ev, bool nested) {
        if (nested) sig.second.emplace_back(ev.kind, ev.callsite, ev.depth);
      });
      most = std::max(most, sig.second.size());
      if (r >= 0 && r < in.n) out[size_t(r)] = std::move(sig);
    }
  return out;
}

// Whether the inputs' ranks made the same nested calls: the same set of
// signatures, and the same signature at each rank every input has and at
// the last rank. Which rank makes a call can be a race (Open MPI's ranks
// each try to create the session directory; the first one's mkdir
// succeeds), and a set alone would not see it move.
bool alike(const std::vector<std::vector<Signature>>& sigs) {
  size_t fewest = sigs.front().size();
  for (const auto& s : sigs) fewest = std::min(fewest, s.size());
  std::set<Signature> first(sigs.front().begin(), sigs.front().end());
  for (const auto& s : sigs) {
    if (std::set<Signature>(s.begin(), s.end()) != first || s.back() != sigs.front().back()) return false;
    if (!std::equal(s.begin(), s.begin() + ptrdiff_t(fewest), sigs.front().begin())) return false;
  }
  return true;
}

// Each rank's file ids that its events `starts` does not nest name.
std::map<int64_t, std::vector<bool>> files_named(const Input& in, NestStart starts) {
  std::map<int64_t, std::vector<bool>> used;  // rank -> per local file id
  for (const trace::Stream& s : in.plan.streams)
    for (int64_t r : s.rank_list()) {
      std::vector<bool>& files = used[r];
      files.resize(in.plan.ranks[size_t(r)].files.size(), false);
      walk_nested(s, r, starts, [&](const trace::Event& ev, bool nested) {
        if (nested) return;
        for (int slot : trace::file_slots(ev.kind)) {
          int64_t id = ev.args[size_t(slot)];
          if (id >= 0 && size_t(id) < files.size()) files[size_t(id)] = true;
        }
      });
    }
  return used;
}

}  // namespace

void drop_nested(Input& in, NestStart starts) {
  std::map<int64_t, std::vector<int64_t>> renumber;  // rank -> new id per local file id, -1 none
  for (const auto& [r, used] : files_named(in, starts)) {
    std::vector<int32_t>& table = in.plan.ranks[size_t(r)].files;
    std::vector<int64_t>& to = renumber[r];
    to.assign(table.size(), -1);
    std::vector<int32_t> compact;
    for (size_t id = 0; id < table.size(); ++id)
      if (used[id]) {
        to[id] = int64_t(compact.size());
        compact.push_back(table[id]);
      }
    table = std::move(compact);
  }
  std::vector<trace::Stream> rebuilt;
  for (const trace::Stream& s : in.plan.streams)
    for (int64_t r : s.rank_list()) {
      const std::vector<int64_t>& to = renumber[r];
      Nesting nesting(starts);
      rebuilt.push_back(merge::rebuilt(s, int32_t(r), [&](const trace::Event& ev, trace::RawEvent& raw) {
        if (nesting.nested(ev)) return false;
        for (int slot : trace::file_slots(raw.kind)) {
          int64_t& id = raw.args[size_t(slot)];
          if (id >= 0 && size_t(id) < to.size()) id = to[size_t(id)];
        }
        return true;
      }));
    }
  in.plan.streams = merge::merge_rebuilt(std::move(rebuilt));
}

std::vector<std::string> align_library_io(std::vector<Input>& inputs) {
  std::vector<std::vector<Signature>> sigs;
  std::vector<size_t> most(inputs.size(), 0);
  for (size_t i = 0; i < inputs.size(); ++i) sigs.push_back(signatures(inputs[i], most[i]));
  if (inputs.empty() || alike(sigs)) return {};
  std::vector<std::string> seen;
  for (size_t i = 0; i < inputs.size(); ++i) {
    seen.push_back(fmt::format("up to {} calls a rank at {} ranks", most[i], inputs[i].n));
    drop_nested(inputs[i], starts_library_io);
  }
  return {
      fmt::format("the MPI library's own I/O inside MPI_Init and MPI_Finalize differs between the inputs ({}): "
                  "left out of every input, its time stays in those calls' durations",
                  fmt::join(seen, ", "))};
}

}  // namespace mpior::extrap
