#include "preload/aggregate_merge.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <exception>
#include <optional>

#include "merge/merge_job.hpp"
#include "preload/config.hpp"
#include "preload/log.hpp"
#include "preload/mpi_state.hpp"
#include "trace/format.hpp"
#include "trace/format_aggregate.hpp"

namespace mpior::preload::aggregate {
namespace {

constinit config::Option<int64_t> opt_radix{
    "MPIOR_MERGE_TREE", 4,
    "at MPI_Finalize (MPIOR_AGGREGATE=auto) the ranks merge their traces over a tree of this radix into one "
    "job trace, merged.mpior, unless a part grows past twice the largest rank's trace + 512 B per rank + 64 KiB "
    "(irregular codes, whose streams do not merge): then the aggregate files; 0: aggregate files only"};
MPIOR_REGISTER_OPTION(opt_radix);

constexpr int kTag = 0x4d53;
constexpr uint64_t kChunk = uint64_t(1) << 30;
// What a merged part may take beyond twice the largest rank's trace: each
// rank's own (process record, table indices, a file of its own) and slack.
constexpr uint64_t kPerRank = 512, kSlack = uint64_t(64) << 10;

namespace pmpi = mpi::pmpi;

void send_node(const std::vector<uint8_t>& bytes, int to, MPI_Comm comm) {
  uint64_t n = bytes.size();
  pmpi::Send(&n, 1, MPI_UINT64_T, to, kTag, comm);
  const uint8_t* p = bytes.data();
  for (uint64_t k; n > 0; p += k, n -= k) {
    k = std::min(n, kChunk);
    pmpi::Send(p, int(k), MPI_BYTE, to, kTag, comm);
  }
}

// A child's encoded part; empty when it failed (or this rank cannot hold it:
// the bytes are still received, so the child is never left waiting).
std::vector<uint8_t> recv_node(int from, MPI_Comm comm) {
  uint64_t n = 0;
  pmpi::Recv(&n, 1, MPI_UINT64_T, from, kTag, comm, MPI_STATUS_IGNORE);
  std::vector<uint8_t> out, scratch;
  try {
    out.resize(n);
  } catch (const std::exception&) {
    out.clear();
    scratch.resize(std::min(n, kChunk));
  }
  for (uint64_t at = 0, k; at < n; at += k) {
    k = std::min(n - at, kChunk);
    pmpi::Recv(out.empty() ? scratch.data() : out.data() + at, int(k), MPI_BYTE, from, kTag, comm, MPI_STATUS_IGNORE);
  }
  return out;
}

// One step: this rank's part and its children's, in rank order.
std::optional<trace::MergedJob> merge_step(std::optional<trace::MergedJob> node,
                                           std::vector<std::vector<uint8_t>>& children, int first_child, int stride) {
  if (!node) return std::nullopt;
  std::vector<trace::MergedJob> parts;
  parts.push_back(std::move(*node));
  for (size_t i = 0; i < children.size(); ++i) {
    if (children[i].empty()) return std::nullopt;
    parts.push_back(trace::decode_merged_job(
        children[i], "the merged traces from rank " + std::to_string(first_child + int(i) * stride)));
    std::vector<uint8_t>().swap(children[i]);
  }
  return merge::merge_jobs(std::move(parts));
}

struct Tree {
  const Context& c;
  uint64_t bound;  // a part encoded larger than this: the ranks do not merge (irregular)
  int radix;

  // This rank's part after the levels it takes part in; the encoded bytes it
  // sent up (not rank 0) or the root's encoding (rank 0, empty on failure).
  std::vector<uint8_t> run(std::optional<trace::MergedJob> node) {
    for (int stride = 1; stride < c.size; stride *= radix) {
      int span = stride * radix;
      if (c.rank % span != 0) {
        send_node(encode_bounded(std::move(node)), c.rank - c.rank % span, c.comm);
        return {};
      }
      std::vector<std::vector<uint8_t>> children;
      for (int j = 1; j < radix && c.rank + j * stride < c.size; ++j)
        children.push_back(recv_node(c.rank + j * stride, c.comm));
      node = guarded([&] { return merge_step(std::move(node), children, c.rank + stride, stride); });
      if (stride > c.size / radix) break;  // the next span would overflow int
    }
    return encode_bounded(std::move(node));
  }

  template <typename F>
  std::optional<trace::MergedJob> guarded(F f) {
    try {
      return f();
    } catch (const std::exception& e) {
      log_warn("rank {}: merging the job's traces: {}", c.rank, e.what());
    }
    return std::nullopt;
  }

  std::vector<uint8_t> encode_bounded(std::optional<trace::MergedJob> node) {
    if (!node) return {};
    try {
      std::vector<uint8_t> b = trace::encode(*node);
      if (b.size() <= bound) return b;
      if (c.rank == 0 || node->ranks.size() * 2 > size_t(c.size))
        log_info("rank {}: {} ranks' merged traces take {} bytes, over {}: the job writes aggregate files", c.rank,
                 node->ranks.size(), b.size(), bound);
    } catch (const std::exception& e) {
      log_warn("rank {}: merged traces not encoded: {}", c.rank, e.what());
    }
    return {};
  }
};

// The local start: this rank's trace as a part of one rank.
std::optional<trace::MergedJob> leaf(const Context& c, const std::vector<uint8_t>& mine) {
  try {
    return merge::job_of_rank(trace::decode_rank_trace(mine, "rank " + std::to_string(c.rank) + "'s trace"));
  } catch (const std::exception& e) {
    log_warn("rank {}: its trace does not enter the merge: {}", c.rank, e.what());
  }
  return std::nullopt;
}

bool write_root(const Context& c, const std::vector<uint8_t>& bytes) {
  if (bytes.empty()) return false;
  try {
    std::span<const uint8_t> parts[] = {bytes};
    trace::write_file_durable(c.dir + "/" + trace::kMergedFileName, parts);
    return true;
  } catch (const std::exception& e) {
    log_warn("rank 0: {}; the job writes aggregate files", e.what());
  }
  return false;
}

}  // namespace

int64_t merge_radix() { return opt_radix.get(); }

bool merge_in_job(const Context& c, const std::vector<uint8_t>& mine, int64_t kill_rank,
                  std::vector<trace::TraceFileRanks>* layout) noexcept {
  try {
    auto start = std::chrono::steady_clock::now();
    // Whether any rank keeps its own file, and the largest trace.
    uint64_t me[2] = {mine.empty() ? 1u : 0u, mine.size()}, all[2] = {0, 0};
    pmpi::Allreduce(me, all, 2, MPI_UINT64_T, MPI_MAX, c.comm);
    if (all[0] != 0) return false;
    if (c.rank == kill_rank) kill(getpid(), SIGKILL);
    uint64_t bound = 2 * all[1] + kPerRank * uint64_t(c.size) + kSlack;
    Tree tree{c, bound, int(std::clamp<int64_t>(opt_radix.get(), 2, 1 << 16))};
    std::vector<uint8_t> root = tree.run(leaf(c, mine));
    uint64_t ok = c.rank == 0 && write_root(c, root);
    pmpi::Bcast(&ok, 1, MPI_UINT64_T, 0, c.comm);
    if (!ok) return false;
    std::string own = c.dir + "/" + trace::rank_file_name(c.rank);
    if (::unlink(own.c_str()) != 0 && errno != ENOENT) log_warn("{}: cannot remove: {}", own, std::strerror(errno));
    if (c.rank == 0) {
      trace::TraceFileRanks f{trace::kMergedFileName, {}};
      for (int r = 0; r < c.size; ++r) f.ranks.push_back(r);
      layout->assign(1, std::move(f));
      log_info("rank 0: {} ranks merged into {} ({} bytes) in {:.3f} s", c.size, trace::kMergedFileName, root.size(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return true;
  } catch (const std::exception& e) {
    log_warn("rank {}: the finalize merge failed ({})", c.rank, e.what());
  } catch (...) {
    log_warn("rank {}: the finalize merge failed", c.rank);
  }
  return false;
}

}  // namespace mpior::preload::aggregate
