#include "children.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <tuple>

#include "builder.hpp"
#include "cursor.hpp"
#include "error.hpp"
#include "format.hpp"

namespace mpior::postproc {
namespace fs = std::filesystem;
namespace arg = trace::arg;

namespace {

// Argument slots that index the file table: every kind but MPI's (whose
// slots are communicators and peers) and the view blocks under set_view.
bool names_files(trace::Kind k) {
  if (trace::is_mpi(k) && !trace::is_mpiio(k)) return false;
  return trace::info(k).op != trace::OpClass::mpiio_block;
}

bool names_second_file(trace::OpClass op) {
  return op == trace::OpClass::rename || op == trace::OpClass::link || op == trace::OpClass::copy;
}

trace::Stream renumbered(const trace::Stream& s, int32_t rank, uint32_t thread, int64_t file_base) {
  trace::StreamBuilder b(trace::BuilderOptions{.lossless = s.lossless});
  trace::CursorOptions opt;
  opt.timing = s.lossless ? trace::CursorOptions::Timing::mean : trace::CursorOptions::Timing::sample;
  trace::EventCursor c(s, rank, opt);
  trace::Event ev;
  while (c.next(ev)) {
    trace::RawEvent r = ev.raw();
    if (names_files(ev.kind)) {
      if (r.args[arg::file] >= 0) r.args[arg::file] += file_base;
      if (names_second_file(trace::info(ev.kind).op) && r.args[arg::file2] >= 0) r.args[arg::file2] += file_base;
    }
    b.append(r);
  }
  return b.snapshot(rank, thread);
}

uint32_t next_thread(const trace::RankTrace& t) {
  uint32_t next = 0;
  for (const trace::Stream& s : t.streams) next = std::max(next, s.thread + 1);
  return next;
}

}  // namespace

void fold_child(trace::RankTrace& parent, const trace::RankTrace& child) {
  int32_t rank = parent.process.rank;
  int64_t file_base = int64_t(parent.files.size());
  uint32_t thread = next_thread(parent);
  for (const trace::Stream& s : child.streams) parent.streams.push_back(renumbered(s, rank, thread++, file_base));
  parent.files.insert(parent.files.end(), child.files.begin(), child.files.end());
  for (size_t k = 0; k < trace::kNumKinds; ++k) {
    parent.pruned[k].calls += child.pruned[k].calls;
    parent.pruned[k].time_ns += child.pruned[k].time_ns;
    parent.excluded[k].calls += child.excluded[k].calls;
  }
  parent.process.end_ns = std::max(parent.process.end_ns, child.process.end_ns);
}

size_t fold_children(TraceSet& set) {
  std::vector<std::tuple<int32_t, int64_t, std::string>> found;
  std::error_code ec;
  for (fs::directory_iterator it(set.dir, ec), end; !ec && it != end; it.increment(ec)) {
    int32_t rank = -1;
    int64_t pid = 0;
    if (trace::child_from_file_name(it->path().filename().string(), &rank, &pid))
      found.emplace_back(rank, pid, it->path().string());
  }
  if (ec) throw PostError(set.dir + ": cannot list: " + ec.message());
  std::sort(found.begin(), found.end());
  size_t folded = 0;
  for (const auto& [rank, pid, path] : found) {
    trace::RankTrace child = trace::read_rank_trace(path);
    if (child.process.job_id != set.job.job_id || rank >= set.size() || child.process.rank != rank) {
      set.warnings.push_back(path + ": a process of job " + job_id_text(child.process.job_id) + ", rank " +
                             std::to_string(child.process.rank) + " (this is job " + job_id_text(set.job.job_id) +
                             "); left out");
      continue;
    }
    if (!child.process.finished)
      set.warnings.push_back(path + ": process " + std::to_string(pid) + " (" + child.process.cmdline +
                             ") ended before its trace was complete");
    fold_child(set.ranks[size_t(rank)], child);
    ++folded;
  }
  return folded;
}

}  // namespace mpior::postproc
