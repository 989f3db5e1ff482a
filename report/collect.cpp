#include "report/collect.hpp"

#include <algorithm>
#include <sstream>

#include "report/svg.hpp"
#include "trace/arg_views.hpp"
#include "trace/text.hpp"
#include "trace/transfer.hpp"

namespace mpior::report {

ReportCollector::ReportCollector(int32_t ranks, int64_t span_ns)
    : ranks_(std::max(1, ranks)),
      span_ns_(std::max<int64_t>(1, span_ns)),
      per_row_((size_t(ranks_) + kMaxRows - 1) / kMaxRows),
      volume_((size_t(ranks_) + per_row_ - 1) / per_row_, std::vector<double>(kBins, 0.0)),
      read_sizes_(65, 0.0),
      write_sizes_(65, 0.0) {}

void ReportCollector::add_volume(int32_t rank, int64_t start_ns, int64_t bytes) {
  if (rank < 0 || rank >= ranks_ || bytes <= 0) return;
  int64_t t = std::clamp<int64_t>(start_ns, 0, span_ns_ - 1);
  size_t bin = size_t(double(t) / double(span_ns_) * double(kBins));
  volume_[size_t(rank) / per_row_][std::min(bin, kBins - 1)] += double(bytes);
}

void ReportCollector::add(int32_t rank, int64_t start_ns, int64_t dur_ns, const trace::Event& ev,
                          const RankNames& names) {
  KindUse& k = kinds_[ev.kind];
  ++k.calls;
  k.time_ns += std::max<int64_t>(0, dur_ns);
  if (trace::is_mpi(ev.kind)) {
    k.bytes += std::max<int64_t>(0, mpi_args(ev).bytes());
    return;
  }
  if (!trace::is_io(ev.kind)) return;
  trace::Transfer t[2];
  int n = trace::transfers(ev, t);
  std::string path = names.path(io_args(ev).file());
  if (!path.empty()) {
    FileUse& f = files_[path];
    ++f.ops;
    f.users.insert(rank);
  }
  for (int i = 0; i < n; ++i) {
    k.bytes += t[i].bytes;
    add_volume(rank, start_ns, t[i].bytes);
    (t[i].write ? write_sizes_ : read_sizes_)[size_bin(t[i].bytes)] += 1;
    std::string p = names.path(ev.args[size_t(t[i].file_slot)]);
    if (p.empty()) continue;
    FileUse& f = files_[p];
    f.users.insert(rank);
    (t[i].write ? f.written : f.read) += t[i].bytes;
    if (t[i].bytes > 0) (t[i].write ? f.writers : f.readers).insert(rank);
  }
}

void ReportCollector::add_pruned(const trace::KindTallies& pruned) {
  for (size_t i = 0; i < pruned.size(); ++i)
    if (pruned[i].calls) {
      KindUse& k = kinds_[trace::Kind(i)];
      k.calls += pruned[i].calls;
      k.pruned += pruned[i].calls;
      k.time_ns += pruned[i].time_ns;
    }
}

std::string ReportCollector::pattern(const FileUse& f, const std::set<int32_t>& own) {
  if (f.writers.size() > 1) return "N-to-1 (shared write)";
  if (f.writers.empty() && f.readers.size() > 1) return "shared read";
  if (f.users.size() > 1) return "shared (" + std::to_string(f.users.size()) + " ranks)";
  if (f.users.size() == 1 && own.size() > 1 && own.count(*f.users.begin())) return "N-to-N (file per rank)";
  return f.users.empty() ? "-" : "one rank";
}

void ReportCollector::fill(ReportData& d) const {
  std::set<int32_t> own;  // ranks that wrote a file no other rank touched
  for (const auto& [path, f] : files_)
    if (f.users.size() == 1 && !f.writers.empty()) own.insert(*f.users.begin());
  d.span_ns = span_ns_;
  d.volume = volume_;
  d.row_labels.clear();
  for (size_t r = 0; r < volume_.size(); ++r) {
    size_t lo = r * per_row_, hi = std::min(size_t(ranks_), lo + per_row_) - 1;
    d.row_labels.push_back(lo == hi ? "rank " + std::to_string(lo)
                                    : "ranks " + std::to_string(lo) + "-" + std::to_string(hi));
  }
  d.read_sizes = read_sizes_;
  d.write_sizes = write_sizes_;
  for (const auto& [kind, k] : kinds_) {
    std::string name(trace::name(kind));
    d.ops.push_back({name, k.calls, k.pruned, k.bytes, double(k.time_ns) / 1e9});
    if (trace::is_mpi(kind)) d.mpi.push_back({name, k.calls - k.pruned, k.pruned});
  }
  std::sort(d.ops.begin(), d.ops.end(), [](const auto& a, const auto& b) { return a.calls > b.calls; });
  for (const auto& [path, f] : files_)
    d.files.push_back({path, f.written, f.read, f.ops, int32_t(f.users.size()), pattern(f, own)});
  std::stable_sort(d.files.begin(), d.files.end(),
                   [](const auto& a, const auto& b) { return a.written + a.read > b.written + b.read; });
}

std::string loops_text(const std::vector<const trace::Stream*>& streams, const std::vector<std::string>& headers,
                       size_t max_chars) {
  std::ostringstream out;
  for (size_t i = 0; i < streams.size(); ++i) {
    out << "== " << headers[i] << "\n";
    trace::print_stream(out, *streams[i]);
    if (out.tellp() > std::streamoff(max_chars)) {
      std::string s = out.str().substr(0, max_chars);
      return s + "\n... (cut at " + std::to_string(max_chars) + " characters)\n";
    }
  }
  return out.str();
}

}  // namespace mpior::report
