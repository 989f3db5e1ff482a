#include "preload/aggregate.hpp"

#include <glob.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <exception>

#include "preload/aggregate_merge.hpp"
#include "preload/config.hpp"
#include "preload/log.hpp"
#include "preload/mpi_state.hpp"
#include "preload/real_table.hpp"
#include "preload/session.hpp"
#include "trace/format.hpp"
#include "trace/format_aggregate.hpp"

namespace mpior::preload::aggregate {
namespace {

constinit config::Option<bool> opt_merge{
    "MPIOR_MERGE", true,
    "at MPI_Finalize the ranks merge their traces into one job trace (MPIOR_MERGE_TREE) or send them to "
    "aggregators that write few files (MPIOR_AGGREGATE); 0: every rank writes its own rank-NNNNNN.mpior"};
constinit config::Option<std::string_view> opt_aggregate{
    "MPIOR_AGGREGATE", "auto",
    "who writes the ranks' traces at MPI_Finalize: auto (one file, ranks.mpior, when they total at most "
    "256 MiB, else one file per node), node (one file per node), or K (one file per K ranks: ranks-NNNNNN.mpior "
    "named by its first rank)"};
constinit config::Option<int64_t> opt_test_kill{
    "MPIOR_TEST_KILL_IN_MERGE", -1,
    "for tests: this rank kills itself (SIGKILL) inside the finalize aggregation, before sending its trace"};
MPIOR_REGISTER_OPTION(opt_merge);
MPIOR_REGISTER_OPTION(opt_aggregate);
MPIOR_REGISTER_OPTION(opt_test_kill);

constexpr uint64_t kOneFileMax = uint64_t(256) << 20;
constexpr int kTag = 0x4d52;
constexpr uint64_t kChunk = uint64_t(1) << 30;

// Where a rank's trace went, as rank 0 gathers it.
enum Code : uint64_t { kNowhere = 0, kJobFile = 1, kOwnFile = 2, kGroupFile = 3 };

// A rank whose tracer spilled part of its trace to rank-NNNNNN.spill* keeps
// its own files: it takes no part in the aggregation.
bool spilled(const std::string& dir, int rank) {
  char name[40];
  std::snprintf(name, sizeof name, "/rank-%06d.spill*", rank);
  glob_t g{};
  bool any = glob((dir + name).c_str(), GLOB_NOSORT, nullptr, &g) == 0 && g.gl_pathc > 0;
  globfree(&g);
  return any;
}

// The group this rank sends its trace to (c.comm itself for the whole job);
// *whole when it is the whole job.
MPI_Comm group_comm(const Context& c, uint64_t mine, bool* whole) {
  std::string_view how = opt_aggregate.get();
  MPI_Comm g = MPI_COMM_NULL;
  if (how == "auto") {
    uint64_t total = 0;
    mpi::pmpi::Allreduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, c.comm);
    how = total <= kOneFileMax ? "all" : "node";
  }
  int64_t k = 0;
  if (how == "all") {
    k = c.size;
  } else if (how != "node") {
    auto [end, ec] = std::from_chars(how.data(), how.data() + how.size(), k);
    if (ec != std::errc() || end != how.data() + how.size() || k < 1) {
      if (c.rank == 0) log_warn("MPIOR_AGGREGATE={}: not auto, node or a rank count; one file per node", how);
      k = 0;
    }
  }
  if (k >= c.size) {  // the whole job: the private communicator itself, no split to make and free
    *whole = true;
    return c.comm;
  }
  if (k > 0)
    mpi::pmpi::Comm_split(c.comm, int(c.rank / k), c.rank, &g);
  else
    mpi::pmpi::Comm_split_type(c.comm, MPI_COMM_TYPE_SHARED, c.rank, MPI_INFO_NULL, &g);
  int n = 0;
  mpi::pmpi::Comm_size(g, &n);
  *whole = n == c.size;
  return g;
}

void send_bytes(const uint8_t* p, uint64_t n, MPI_Comm g) {
  for (uint64_t k; n > 0; p += k, n -= k) {
    k = std::min(n, kChunk);
    mpi::pmpi::Send(p, int(k), MPI_BYTE, 0, kTag, g);
  }
}

void recv_bytes(uint8_t* p, uint64_t n, int from, MPI_Comm g) {
  for (uint64_t k; n > 0; p += k, n -= k) {
    k = std::min(n, kChunk);
    mpi::pmpi::Recv(p, int(k), MPI_BYTE, from, kTag, g, MPI_STATUS_IGNORE);
  }
}

// One Gatherv moves a group's traces when they fit its int counts (the MPI's
// own algorithm, not one receive after another); larger groups go point to
// point. The aggregator's broadcast says which (kSend).
using GathervFn = int (*)(const void*, int, MPI_Datatype, void*, const int*, const int*, MPI_Datatype, int, MPI_Comm);
GathervFn gatherv() {
  static GathervFn fn = reinterpret_cast<GathervFn>(real::resolve("PMPI_Gatherv"));
  return fn;
}
enum Send : uint64_t { kNoSend = 0, kPointToPoint = 1, kGatherv = 2 };

// The aggregator: receives its members' traces (members[2i] = world rank,
// members[2i+1] = length, 0 for none) and writes the file. Returns whether
// the file is durable. It first tells the members whether to send at all
// (whether the buffer could be made).
bool collect_and_write(const Context& c, const std::vector<uint64_t>& members, const std::vector<uint8_t>& mine,
                       const std::string& path, MPI_Comm g) {
  size_t n = members.size() / 2;
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) total += members[2 * i + 1];
  std::vector<uint8_t> traces;
  uint64_t go = kPointToPoint;
  try {
    traces.resize(total);
  } catch (const std::exception&) {  // bad_alloc, length_error: the members must still hear
    go = kNoSend;
  }
  if (go && total <= uint64_t(INT_MAX) && gatherv()) go = kGatherv;
  mpi::pmpi::Bcast(&go, 1, MPI_UINT64_T, 0, g);
  if (!go) {
    log_warn("aggregator {}: no memory for its ranks' {} trace bytes; the ranks keep their own files", c.rank, total);
    return false;
  }
  std::vector<int32_t> ranks;
  std::vector<uint64_t> lengths;
  std::vector<int> counts(n), displs(n);
  uint64_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    uint64_t len = members[2 * i + 1];
    counts[i] = int(std::min<uint64_t>(len, INT_MAX));
    displs[i] = int(std::min<uint64_t>(at, INT_MAX));
    if (len == 0) continue;
    if (go == kPointToPoint && i == 0) std::memcpy(traces.data(), mine.data(), len);
    if (go == kPointToPoint && i > 0) recv_bytes(traces.data() + at, len, int(i), g);
    ranks.push_back(int32_t(members[2 * i]));
    lengths.push_back(len);
    at += len;
  }
  if (go == kGatherv)
    gatherv()(mine.data(), int(mine.size()), MPI_BYTE, traces.data(), counts.data(), displs.data(), MPI_BYTE, 0, g);
  try {
    std::vector<uint8_t> head = trace::aggregate_head(c.job_id, c.size, ranks, lengths, traces);
    std::span<const uint8_t> parts[] = {head, traces, trace::aggregate_tail()};
    trace::write_file_durable(path, parts);
    return true;
  } catch (const std::exception& e) {
    log_warn("aggregator {}: {}; its ranks keep their own files", c.rank, e.what());
    return false;
  }
}

// This rank's part once its aggregator has answered: where its trace is.
uint64_t settle(const Context& c, std::vector<uint8_t>& mine, bool written) {
  std::string own = c.dir + "/" + trace::rank_file_name(c.rank);
  if (written) {
    if (::unlink(own.c_str()) != 0 && errno != ENOENT) log_warn("{}: cannot remove: {}", own, std::strerror(errno));
    return kGroupFile;
  }
  try {
    trace::write_file_atomic(own, mine);
    return kOwnFile;
  } catch (const std::exception& e) {
    log_error("rank {}: trace not written: {}", c.rank, e.what());
    return kNowhere;
  }
}

std::vector<trace::TraceFileRanks> layout_of(const std::vector<uint64_t>& where, int size) {
  std::vector<trace::TraceFileRanks> out;
  auto file = [&](const std::string& name) -> trace::TraceFileRanks& {
    for (trace::TraceFileRanks& f : out)
      if (f.name == name) return f;
    return out.emplace_back(trace::TraceFileRanks{name, {}});
  };
  for (int r = 0; r < size; ++r) {
    uint64_t code = where[2 * size_t(r)], leader = where[2 * size_t(r) + 1];
    if (code == kJobFile) file(trace::kJobTracesFileName).ranks.push_back(r);
    if (code == kGroupFile) file(trace::aggregate_file_name(int32_t(leader))).ranks.push_back(r);
    if (code == kOwnFile) file(trace::rank_file_name(r)).ranks.push_back(r);
  }
  return out;
}

Result run(const Context& c) {
  bool own_files = spilled(c.dir, c.rank);
  std::vector<uint8_t> mine;
  if (!own_files) mine = session::encode_rank(true);
  if (opt_aggregate.get() == "auto" && merge_radix() > 0) {  // one merged job trace, if the ranks' traces merge
    Result merged;
    if (merge_in_job(c, mine, opt_test_kill.get(), &merged.layout)) {
      merged.written = true;
      return merged;
    }
  }
  bool own_ok = own_files && session::write_rank(true);
  bool whole = false;
  MPI_Comm g = group_comm(c, mine.size(), &whole);
  int grank = 0;
  mpi::pmpi::Comm_rank(g, &grank);
  int gsize = 1;
  mpi::pmpi::Comm_size(g, &gsize);
  uint64_t me[2] = {uint64_t(c.rank), mine.size()};
  std::vector<uint64_t> members(grank == 0 ? 2 * size_t(gsize) : 2);
  mpi::pmpi::Gather(me, 2, MPI_UINT64_T, members.data(), 2, MPI_UINT64_T, 0, g);
  if (c.rank == opt_test_kill.get()) kill(getpid(), SIGKILL);
  // status: the file is durable, the aggregator's world rank.
  uint64_t status[2] = {0, uint64_t(c.rank)};
  std::string path = c.dir + "/" + (whole ? trace::kJobTracesFileName : trace::aggregate_file_name(c.rank));
  if (grank == 0) {
    status[0] = collect_and_write(c, members, mine, path, g);
  } else {
    uint64_t go = kNoSend;
    mpi::pmpi::Bcast(&go, 1, MPI_UINT64_T, 0, g);
    if (go == kGatherv)
      gatherv()(mine.data(), int(mine.size()), MPI_BYTE, nullptr, nullptr, nullptr, MPI_BYTE, 0, g);
    else if (go == kPointToPoint && !mine.empty())
      send_bytes(mine.data(), mine.size(), g);
  }
  mpi::pmpi::Bcast(status, 2, MPI_UINT64_T, 0, g);
  if (g != c.comm) mpi::pmpi::Comm_free(&g);
  uint64_t where[2] = {kNowhere, status[1]};
  if (own_files)
    where[0] = own_ok ? kOwnFile : kNowhere;
  else if (me[1] > 0)
    where[0] = settle(c, mine, status[0] != 0);
  if (where[0] == kGroupFile && whole) where[0] = kJobFile;
  std::vector<uint64_t> all(c.rank == 0 ? 2 * size_t(c.size) : 2);
  mpi::pmpi::Gather(where, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, 0, c.comm);
  Result out;
  out.written = where[0] != kNowhere;
  if (c.rank == 0) out.layout = layout_of(all, c.size);
  return out;
}

}  // namespace

bool enabled() { return opt_merge.get(); }

Result finalize(const Context& c) noexcept {
  try {
    return run(c);
  } catch (const std::exception& e) {
    log_warn("rank {}: the finalize aggregation failed ({}); the rank writes its own file", c.rank, e.what());
  } catch (...) {
    log_warn("rank {}: the finalize aggregation failed; the rank writes its own file", c.rank);
  }
  Result out;
  out.written = session::write_rank(true);
  return out;
}

}  // namespace mpior::preload::aggregate
