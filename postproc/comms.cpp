#include "postproc/comms.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "trace/tool_error.hpp"

namespace mpior::postproc {

using trace::CommEntry;
using trace::CommOrigin;

std::string creator_name(CommOrigin origin) {
  switch (origin) {
    case CommOrigin::world:
      return "MPI_COMM_WORLD";
    case CommOrigin::self:
      return "MPI_COMM_SELF";
    case CommOrigin::dup:
      return "MPI_Comm_dup";
    case CommOrigin::split:
      return "MPI_Comm_split";
    case CommOrigin::create:
      return "MPI_Comm_create";
    case CommOrigin::cart:
      return "MPI_Cart_create";
    case CommOrigin::cart_sub:
      return "MPI_Cart_sub";
    case CommOrigin::intercomm:
      return "MPI_Intercomm_create";
    case CommOrigin::merge:
      return "MPI_Intercomm_merge";
    case CommOrigin::group:
      return "MPI_Comm_create_group";
    case CommOrigin::from_group:
      return "MPI_Comm_create_from_group";
    case CommOrigin::graph:
      return "a graph constructor";
    case CommOrigin::unknown:
      break;
  }
  return "an untraced call";
}

std::string members_text(const std::vector<int32_t>& members) {
  constexpr size_t kShown = 16;
  std::string s = "[";
  for (size_t i = 0; i < members.size() && i < kShown; ++i) s += (i ? ", " : "") + std::to_string(members[i]);
  if (members.size() > kShown) s += ", ... (" + std::to_string(members.size()) + " members)";
  return s + "]";
}

std::vector<trace::PlanComm> CommResolution::plan_comms() const {
  std::vector<trace::PlanComm> out;
  out.reserve(comms.size());
  for (const GlobalComm& c : comms) out.push_back({c.members, c.origin});
  return out;
}

namespace {

constexpr int32_t kMaxLocalId = 1 << 24;

// Made by a collective over the parent every member counts; the others are
// told apart by their members and their order of appearance.
bool by_members(CommOrigin o) {
  return o == CommOrigin::unknown || o == CommOrigin::intercomm || o == CommOrigin::group ||
         o == CommOrigin::from_group;
}
bool is_derived(CommOrigin o) { return o != CommOrigin::world && o != CommOrigin::self && !by_members(o); }

class Resolver {
 public:
  explicit Resolver(const TraceSet& set) : set_(set) {}
  CommResolution run();

 private:
  void resolve_rank(int32_t r);
  int32_t global_id(int32_t r, const CommEntry& e, std::map<std::vector<int32_t>, uint32_t>& unknown_seen);
  int32_t derived_id(int32_t r, const CommEntry& e);
  int32_t add(GlobalComm c);
  void check_members(int32_t r, const CommEntry& e) const;
  void check_inside_parent(int32_t r, const CommEntry& e, int32_t parent) const;
  void hold(int32_t g, int32_t r, const CommEntry& e);
  void check_every_member_holds() const;
  [[noreturn]] void missing_member(int32_t g, int32_t member) const;
  std::string what_rank_made(int32_t g, int32_t member) const;
  std::string who(int32_t r) const { return "rank " + std::to_string(r) + " (" + set_.path(r) + ")"; }
  std::string entry_name(int32_t r, const CommEntry& e) const {
    return set_.path(r) + ": communicator " + std::to_string(e.id);
  }

  const TraceSet& set_;
  CommResolution out_;
  std::vector<std::vector<uint8_t>> held_;  // per global id, per member position
  std::map<std::tuple<int32_t, uint64_t, std::vector<int32_t>>, int32_t> derived_;
  std::map<std::pair<std::vector<int32_t>, uint32_t>, int32_t> unknown_;
};

CommResolution Resolver::run() {
  GlobalComm world{CommOrigin::world, -1, 0, 0, {}};
  for (int32_t r = 0; r < set_.size(); ++r) world.members.push_back(r);
  add(std::move(world));
  out_.local_to_global.resize(size_t(set_.size()));
  out_.local_position.resize(size_t(set_.size()));
  for (int32_t r = 0; r < set_.size(); ++r) resolve_rank(r);
  check_every_member_holds();
  return std::move(out_);
}

void Resolver::resolve_rank(int32_t r) {
  auto& to_global = out_.local_to_global[size_t(r)];
  auto& position = out_.local_position[size_t(r)];
  std::map<std::vector<int32_t>, uint32_t> unknown_seen;
  for (const CommEntry& e : set_.ranks[size_t(r)].comms) {
    if (e.id < 0 || e.id >= kMaxLocalId) throw ToolError(entry_name(r, e) + ": implausible communicator id");
    if (size_t(e.id) >= to_global.size()) {
      to_global.resize(size_t(e.id) + 1, -1);
      position.resize(size_t(e.id) + 1, -1);
    }
    if (to_global[size_t(e.id)] != -1) throw ToolError(entry_name(r, e) + " appears twice in the communicator table");
    check_members(r, e);
    int32_t g = global_id(r, e, unknown_seen);
    hold(g, r, e);
    to_global[size_t(e.id)] = g;
    const auto& m = out_.comms[size_t(g)].members;
    position[size_t(e.id)] = int32_t(std::find(m.begin(), m.end(), r) - m.begin());
  }
}

int32_t Resolver::add(GlobalComm c) {
  held_.emplace_back(c.members.size(), 0);
  out_.comms.push_back(std::move(c));
  return int32_t(out_.comms.size() - 1);
}

void Resolver::check_members(int32_t r, const CommEntry& e) const {
  std::vector<uint8_t> seen(size_t(set_.size()), 0);
  bool self_in = false;
  for (int32_t m : e.members) {
    if (m < 0 || m >= set_.size())
      throw ToolError(entry_name(r, e) + " has member " + std::to_string(m) + ", not a rank of the job");
    if (seen[size_t(m)]++) throw ToolError(entry_name(r, e) + " lists rank " + std::to_string(m) + " twice");
    self_in = self_in || m == r;
  }
  if (!self_in) throw ToolError(entry_name(r, e) + " does not list its own rank among its members");
}

int32_t Resolver::global_id(int32_t r, const CommEntry& e, std::map<std::vector<int32_t>, uint32_t>& unknown_seen) {
  switch (e.origin) {
    case CommOrigin::world:
      if (e.members != out_.comms[0].members)
        throw ToolError(entry_name(r, e) + " is MPI_COMM_WORLD but does not list every rank in order");
      return 0;
    case CommOrigin::self:
      if (e.members.size() != 1) throw ToolError(entry_name(r, e) + " is MPI_COMM_SELF but has several members");
      return add({CommOrigin::self, -1, 0, r, e.members});
    default:
      if (is_derived(e.origin)) return derived_id(r, e);
      {
        // The k-th untraced communicator with these members on one rank is the
        // k-th on every other member: each names it at first use, in order.
        // (Made over a group, or an intercommunicator: the same rule.)
        uint32_t k = unknown_seen[e.members]++;
        auto [it, fresh] = unknown_.try_emplace({e.members, k}, 0);
        if (fresh) it->second = add({e.origin, -1, k, r, e.members});
        return it->second;
      }
  }
}

int32_t Resolver::derived_id(int32_t r, const CommEntry& e) {
  const auto& to_global = out_.local_to_global[size_t(r)];
  if (e.parent < 0 || size_t(e.parent) >= to_global.size() || to_global[size_t(e.parent)] < 0)
    throw ToolError(entry_name(r, e) + " (made by " + creator_name(e.origin) + ") names parent communicator " +
                    std::to_string(e.parent) + ", which the table does not define before it");
  int32_t parent = to_global[size_t(e.parent)];
  auto [it, fresh] = derived_.try_emplace({parent, e.parent_seq, e.members}, 0);
  if (fresh) {
    check_inside_parent(r, e, parent);
    it->second = add({e.origin, parent, e.parent_seq, r, e.members});
    return it->second;
  }
  const GlobalComm& c = out_.comms[size_t(it->second)];
  if (c.origin != e.origin)
    throw ToolError("communicators disagree: " + who(c.first_rank) + " made communicator " +
                    std::to_string(it->second) + " with " + creator_name(c.origin) + ", " + who(r) + " with " +
                    creator_name(e.origin) + ", both from collective #" + std::to_string(e.parent_seq) +
                    " on communicator " + std::to_string(parent) + ", members " + members_text(e.members));
  return it->second;
}

void Resolver::check_inside_parent(int32_t r, const CommEntry& e, int32_t parent) const {
  std::vector<uint8_t> in_parent(size_t(set_.size()), 0);
  for (int32_t m : out_.comms[size_t(parent)].members) in_parent[size_t(m)] = 1;
  for (int32_t m : e.members)
    if (!in_parent[size_t(m)])
      throw ToolError(entry_name(r, e) + " (made by " + creator_name(e.origin) + ") has member " + std::to_string(m) +
                      ", who is not in its parent communicator " + std::to_string(parent));
}

void Resolver::hold(int32_t g, int32_t r, const CommEntry& e) {
  if (g == 0) return;  // world: checked against the job's size instead
  const auto& m = out_.comms[size_t(g)].members;
  size_t pos = size_t(std::find(m.begin(), m.end(), r) - m.begin());
  if (held_[size_t(g)][pos]++)
    throw ToolError(entry_name(r, e) + " is the same communicator (" + creator_name(e.origin) + ", members " +
                    members_text(e.members) + ") as an earlier entry of the table");
}

void Resolver::check_every_member_holds() const {
  for (size_t g = 1; g < out_.comms.size(); ++g) {
    const auto& members = out_.comms[g].members;
    for (size_t i = 0; i < members.size(); ++i)
      if (!held_[g][i]) missing_member(int32_t(g), members[i]);
  }
}

// What `member` made from the same creating call, to say how the two differ.
std::string Resolver::what_rank_made(int32_t g, int32_t member) const {
  const GlobalComm& c = out_.comms[size_t(g)];
  const auto& to_global = out_.local_to_global[size_t(member)];
  if (c.origin == CommOrigin::unknown) return "it names fewer untraced communicators with these members";
  for (const CommEntry& e : set_.ranks[size_t(member)].comms) {
    if (!is_derived(e.origin) || e.parent < 0 || size_t(e.parent) >= to_global.size()) continue;
    if (to_global[size_t(e.parent)] == c.parent && e.parent_seq == c.parent_seq)
      return "from the same call it made a communicator with members " + members_text(e.members);
  }
  return "it made no communicator from collective #" + std::to_string(c.parent_seq) + " on communicator " +
         std::to_string(c.parent);
}

void Resolver::missing_member(int32_t g, int32_t member) const {
  const GlobalComm& c = out_.comms[size_t(g)];
  std::string made = c.origin == CommOrigin::unknown
                         ? "uses an untraced communicator"
                         : "made a communicator with " + creator_name(c.origin) + " from collective #" +
                               std::to_string(c.parent_seq) + " on communicator " + std::to_string(c.parent);
  throw ToolError("communicators disagree: " + who(c.first_rank) + " " + made + ", members " + members_text(c.members) +
                  "; member " + who(member) + " has no such communicator (" + what_rank_made(g, member) + ")");
}

}  // namespace

CommResolution resolve_comms(const TraceSet& set) { return Resolver(set).run(); }

}  // namespace mpior::postproc
