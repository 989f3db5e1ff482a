// The MPI replay's communicators (mpi_mode.hpp): which process holds which
// plan communicator, made at the start or at their records, freed at theirs.
#include <fmt/format.h>

#include <algorithm>

#include "replayer/mpi_mode.hpp"
#include "replayer/mpi_yield.hpp"
#include "trace/tool_error.hpp"

namespace mpior::replay {

using trace::CommOrigin;

int32_t MpiComm::proc_rank(int32_t world_proc) const {
  for (size_t i = 0; i < procs.size(); ++i)
    if (procs[i] == world_proc) return int32_t(i);
  return -1;
}

namespace {
// Communicators the plan shows no creating record for exist from the start.
bool made_at_start(CommOrigin o) { return o == CommOrigin::world || o == CommOrigin::self || o == CommOrigin::unknown; }
}  // namespace

// One communicator per plan communicator among the processes holding its
// members (in the plan's member order when each process holds one rank, so
// MPI's ranks are the plan's); communicators inside one process need no MPI.
MpiBackend::MpiBackend(const trace::Plan& plan, int32_t me, int32_t procs, bool native_mpiio, const Hints& hints)
    : plan_(plan),
      blocks_{int32_t(plan.ranks.size()), procs},
      me_(me),
      native_(native_mpiio),
      hints_(hints),
      comms_(plan.comms.size()) {
  void* ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found);
  if (found && ub) tag_ub_ = *static_cast<int*>(ub);
  MPI_Comm_group(MPI_COMM_WORLD, &world_group_);
  clock_ = share_process0_clock(me, procs);
  count_node_threads();
  // One-member communicators (each rank's MPI_COMM_SELF) share one set:
  // MPI has a few thousand communicators, plans may have as many ranks.
  MPI_Comm_dup(MPI_COMM_SELF, &self_.msg);
  if (one_per_rank()) MPI_Comm_dup(MPI_COMM_SELF, &self_.file);
  for (size_t g = 0; g < plan.comms.size(); ++g) {
    const std::vector<int32_t>& members = plan.comms[g].members;
    MpiComm& c = comms_[g];
    uint32_t mine = 0;
    for (size_t i = 0; i < members.size(); ++i) {
      int32_t p = blocks_.owner(members[i]);
      c.procs.push_back(p);
      mine += p == me;
    }
    if (!one_per_rank()) {
      std::sort(c.procs.begin(), c.procs.end());
      c.procs.erase(std::unique(c.procs.begin(), c.procs.end()), c.procs.end());
    }
    c.meet = std::make_unique<LocalMeet>(mine);
    c.local_members = mine;
    c.at_record = !made_at_start(plan.comms[g].origin);
    if (!c.at_record) make_eagerly(g);
  }
}

// Collective over MPI_COMM_WORLD: this process's replay threads (one per
// rank and traced thread), summed over the processes of its node.
void MpiBackend::count_node_threads() {
  uint32_t mine = 0;
  for (const trace::Stream& s : plan_.streams)
    for (int64_t r : s.rank_list()) mine += blocks_.owner(int32_t(r)) == me_;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me_, MPI_INFO_NULL, &node);
  MPI_Allreduce(&mine, &node_threads_, 1, MPI_UINT32_T, MPI_SUM, node);
  MPI_Comm_free(&node);
}

// Collective over MPI_COMM_WORLD, in plan order on every process.
void MpiBackend::make_eagerly(size_t g) {
  const std::vector<int32_t>& members = plan_.comms[g].members;
  MpiComm& c = comms_[g];
  int32_t mine = 0, key = me_;
  for (size_t i = 0; i < members.size(); ++i)
    if (blocks_.owner(members[i]) == me_) ++mine, key = one_per_rank() ? int32_t(i) : me_;
  if (c.procs.size() == 1) {  // every member here: messages to ourselves
    if (mine) make_now(int32_t(g), -1);
    return;
  }
  MPI_Comm_split(MPI_COMM_WORLD, mine ? 0 : MPI_UNDEFINED, key, &c.msg);
}

// By the process's last member to arrive (or at the start): collective over
// the communicator's processes only.
void MpiBackend::make_now(int32_t g, int32_t idup_of) {
  MpiComm& c = comms_[size_t(g)];
  if (plan_.comms[size_t(g)].members.size() == 1) {
    c.msg = self_.msg, c.file = self_.file, c.borrowed = true;
    return;
  }
  auto check = [&](int rc, const char* what) {
    if (rc != MPI_SUCCESS) throw ToolError(fmt::format("communicator {}: {} failed", g, what));
  };
  if (idup_of >= 0 && ready(idup_of)) {
    MpiComm& parent = comms_[size_t(idup_of)];
    c.idups.assign(1, MPI_REQUEST_NULL);
    check(MPI_Comm_idup(parent.msg, &c.msg, &c.idups[0]), "MPI_Comm_idup");
    c.idup_pending = true;
    return;
  }
  if (c.procs.size() == 1) {
    check(MPI_Comm_dup(MPI_COMM_SELF, &c.msg), "MPI_Comm_dup");
  } else {
    MPI_Group group;
    check(MPI_Group_incl(world_group_, int(c.procs.size()), c.procs.data(), &group), "MPI_Group_incl");
    // The tag tells apart creations other threads of this process make at once.
    int rc = MPI_Comm_create_group(MPI_COMM_WORLD, group, int(g % std::max(1, tag_ub_)), &c.msg);
    MPI_Group_free(&group);
    check(rc, "MPI_Comm_create_group");
  }
}

MPI_Comm MpiBackend::file_comm(int32_t global) {
  MpiComm& c = comms_[size_t(global)];
  if (!one_per_rank() || !ready(global)) return MPI_COMM_NULL;
  std::lock_guard lock(*c.mu);
  if (c.file == MPI_COMM_NULL && MPI_Comm_dup(c.msg, &c.file) != MPI_SUCCESS)
    throw ToolError(fmt::format("communicator {}: MPI_Comm_dup for MPI_File_open failed", global));
  return c.file;
}

void MpiBackend::make(int32_t global, int32_t idup_of) {
  MpiComm& c = comms_[size_t(global)];
  if (!c.at_record) return;
  if (idup_of >= 0) {  // nonblocking: no member waits for the others here (ready() does)
    std::lock_guard lock(*c.mu);
    if (++c.idup_arrived < c.local_members) return;
    c.idup_arrived = 0;
    make_now(global, idup_of);
    c.made.notify_all();
    return;
  }
  c.meet->run([&] {
    std::lock_guard lock(*c.mu);
    if (c.msg != MPI_COMM_NULL)
      throw ToolError(fmt::format("communicator {} made again before its MPI_Comm_free", global));
    c.free_when_idle = false;
    make_now(global, idup_of);
  });
}

bool MpiBackend::ready(int32_t global) {
  MpiComm& c = comms_[size_t(global)];
  if (!c.at_record) return c.msg != MPI_COMM_NULL;
  std::unique_lock lock(*c.mu);
  // An idup: this process's other members may not all have posted theirs yet.
  c.made.wait(lock, [&] { return c.idup_arrived == 0; });
  if (c.idup_pending) {
    if (waitall_yielding(int(c.idups.size()), c.idups.data()) != MPI_SUCCESS)
      throw ToolError(fmt::format("communicator {}: MPI_Comm_idup failed", global));
    c.idups.clear();
    c.idup_pending = false;
  }
  // Freed with receives outstanding, it stays until they complete.
  return c.msg != MPI_COMM_NULL;
}

void MpiBackend::free_handles(MpiComm& c) {
  if (!c.idups.empty()) MPI_Waitall(int(c.idups.size()), c.idups.data(), MPI_STATUSES_IGNORE);
  c.idups.clear();
  c.idup_pending = false;
  for (MPI_Comm* m : {&c.msg, &c.file})
    if (c.borrowed)
      *m = MPI_COMM_NULL;
    else if (*m != MPI_COMM_NULL)
      MPI_Comm_free(m);
  c.borrowed = false;
  c.free_when_idle = false;
}

void MpiBackend::unmake(int32_t global) {
  MpiComm& c = comms_[size_t(global)];
  if (!c.at_record) return;
  c.meet->run([&] {
    std::lock_guard lock(*c.mu);
    if (c.open_receives > 0)
      c.free_when_idle = true;
    else
      free_handles(c);
  });
}

void MpiBackend::receive_opened(int32_t global) {
  MpiComm& c = comms_[size_t(global)];
  if (!c.at_record) return;
  std::lock_guard lock(*c.mu);
  ++c.open_receives;
}

void MpiBackend::receive_closed(int32_t global) {
  MpiComm& c = comms_[size_t(global)];
  if (!c.at_record) return;
  std::lock_guard lock(*c.mu);
  if (c.open_receives > 0 && --c.open_receives == 0 && c.free_when_idle) free_handles(c);
}

MpiBackend::~MpiBackend() {
  for (MpiComm& c : comms_) free_handles(c);
  for (MPI_Comm* m : {&self_.msg, &self_.file})
    if (*m != MPI_COMM_NULL) MPI_Comm_free(m);
  if (world_group_ != MPI_GROUP_NULL) MPI_Group_free(&world_group_);
}

std::vector<SizeLog> MpiBackend::gather_size_logs(const std::vector<const SizeLog*>& mine) {
  std::vector<int64_t> flat;
  flat.push_back(int64_t(mine.size()));
  for (const SizeLog* log : mine) log->append_to(flat);
  int len = int(flat.size());
  std::vector<int> lens(size_t(me_ == 0 ? blocks_.procs : 1)), at(lens.size());
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int64_t> all;
  if (me_ == 0) {
    int total = 0;
    for (size_t p = 0; p < lens.size(); ++p) at[p] = total, total += lens[p];
    all.resize(size_t(total));
  }
  MPI_Gatherv(flat.data(), len, MPI_INT64_T, all.data(), lens.data(), at.data(), MPI_INT64_T, 0, MPI_COMM_WORLD);
  std::vector<SizeLog> out;
  const int64_t *p = all.data(), *end = all.data() + all.size();
  while (p < end)
    for (int64_t n = *p++; n > 0 && p < end; --n) out.push_back(SizeLog::read_from(p, end));
  return out;
}

}  // namespace mpior::replay
