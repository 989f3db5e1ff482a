#include "report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <ostream>

#include "error.hpp"
#include "format.hpp"

namespace mpior::replay {

void OpStats::add(int64_t ns, int64_t moved) {
  ++count;
  bytes += uint64_t(std::max<int64_t>(moved, 0));
  total_ns += ns;
  max_ns = std::max(max_ns, ns);
}

void OpStats::merge(const OpStats& o) {
  count += o.count;
  bytes += o.bytes;
  total_ns += o.total_ns;
  max_ns = std::max(max_ns, o.max_ns);
}

void OpTable::add(trace::Kind k, int64_t ns, int64_t moved) {
  for (auto& [kind, stats] : entries_)
    if (kind == k) return stats.add(ns, moved);
  entries_.emplace_back(k, OpStats{});
  entries_.back().second.add(ns, moved);
}

void ErrorLog::add(std::string message) {
  std::lock_guard lock(mu_);
  ++count_;
  if (first_.size() < kKept) first_.push_back(std::move(message));
}

uint64_t ErrorLog::count() const {
  std::lock_guard lock(mu_);
  return count_;
}

std::vector<std::string> ErrorLog::first() const {
  std::lock_guard lock(mu_);
  return first_;
}

double Report::error_pct() const {
  return traced_ns > 0 ? double(replay_ns - traced_ns) / double(traced_ns) * 100.0 : 0.0;
}

namespace {

constexpr size_t kMaxThreadRows = 64;

void print_threads(std::ostream& out, const Report& r) {
  if (r.per_thread.empty()) return;
  if (r.per_thread.size() <= kMaxThreadRows) {
    fmt::print(out, "\n{:>8} {:>6} {:>12} {:>12} {:>10}\n", "rank", "thread", "replay_s", "traced_s", "events");
    for (const ThreadSummary& t : r.per_thread)
      fmt::print(out, "{:>8} {:>6} {:>12.6f} {:>12.6f} {:>10}\n", t.rank, t.thread, t.replay_ns / 1e9,
                 t.traced_ns / 1e9, t.events);
    return;
  }
  auto [lo, hi] = std::minmax_element(r.per_thread.begin(), r.per_thread.end(),
                                      [](const auto& a, const auto& b) { return a.replay_ns < b.replay_ns; });
  double sum = 0;
  for (const ThreadSummary& t : r.per_thread) sum += double(t.replay_ns);
  fmt::print(out, "\nper-thread replay time: min {:.6f} s (rank {}), mean {:.6f} s, max {:.6f} s (rank {})\n",
             lo->replay_ns / 1e9, lo->rank, sum / double(r.per_thread.size()) / 1e9, hi->replay_ns / 1e9, hi->rank);
  fmt::print(out, "(every thread is in the --json report)\n");
}

void print_ops(std::ostream& out, const Report& r) {
  if (r.ops.empty()) return;
  fmt::print(out, "\n{:<24} {:>10} {:>14} {:>12} {:>12} {:>12}\n", "operation", "count", "bytes", "total_s", "mean_us",
             "max_us");
  for (const auto& [name, s] : r.ops)
    fmt::print(out, "{:<24} {:>10} {:>14} {:>12.6f} {:>12.3f} {:>12.3f}\n", name, s.count, s.bytes, s.total_ns / 1e9,
               s.mean_us(), s.max_ns / 1e3);
}

}  // namespace

void print_text(std::ostream& out, const Report& r) {
  fmt::print(out, "replay of {} on {}: {} ranks, {} threads\n", r.plan, r.fs, r.ranks, r.threads);
  fmt::print(out, "traced time  {:>12.6f} s\n", r.traced_ns / 1e9);
  fmt::print(out, "replay time  {:>12.6f} s\n", r.replay_ns / 1e9);
  fmt::print(out, "setup time   {:>12.6f} s (target prepared and {} threads running)\n", r.setup_ns / 1e9, r.threads);
  fmt::print(out, "error        {:>+12.2f} %\n", r.error_pct());
  print_threads(out, r);
  print_ops(out, r);
  fmt::print(out, "\nfailed calls: {}", r.errors);
  if (r.skipped) fmt::print(out, " (and {} calls that had failed when traced, replayed as their duration)", r.skipped);
  fmt::print(out, "\n");
  for (const std::string& e : r.first_errors) fmt::print(out, "  {}\n", e);
  if (r.errors > r.first_errors.size()) fmt::print(out, "  ... {} more\n", r.errors - r.first_errors.size());
  for (const std::string& w : r.warnings) fmt::print(out, "warning: {}\n", w);
}

nlohmann::json to_json(const Report& r) {
  nlohmann::json j;
  j["plan"] = r.plan;
  j["fs"] = r.fs;
  j["ranks"] = r.ranks;
  j["threads"] = r.threads;
  j["traced_s"] = r.traced_ns / 1e9;
  j["replay_s"] = r.replay_ns / 1e9;
  j["setup_s"] = r.setup_ns / 1e9;
  j["error_pct"] = r.error_pct();
  nlohmann::json rows = nlohmann::json::array();
  for (const ThreadSummary& t : r.per_thread)
    rows.push_back({{"rank", t.rank},
                    {"thread", t.thread},
                    {"replay_s", t.replay_ns / 1e9},
                    {"traced_s", t.traced_ns / 1e9},
                    {"events", t.events}});
  j["per_rank"] = std::move(rows);
  nlohmann::json ops = nlohmann::json::object();
  for (const auto& [name, s] : r.ops)
    ops[name] = {{"count", s.count},
                 {"bytes", s.bytes},
                 {"total_s", s.total_ns / 1e9},
                 {"mean_us", s.mean_us()},
                 {"max_us", s.max_ns / 1e3}};
  j["ops"] = std::move(ops);
  j["errors"] = {{"count", r.errors}, {"first", r.first_errors}};
  j["skipped"] = r.skipped;
  j["warnings"] = r.warnings;
  return j;
}

void write_json(const std::string& path, const Report& r) {
  std::string text = to_json(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  try {
    trace::write_file_atomic(path, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  } catch (const std::exception& e) {
    throw ReplayError(std::string("--json: ") + e.what());
  }
}

}  // namespace mpior::replay
