#include "replayer/replay_report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <fstream>
#include <ostream>

#include "trace/format.hpp"
#include "trace/tool_error.hpp"

namespace mpior::replay {

void OpStats::merge(const OpStats& o) {
  count += o.count;
  bytes += o.bytes;
  total_ns += o.total_ns;
  max_ns = std::max(max_ns, o.max_ns);
}

void OpTable::add_slow(trace::Kind k, int64_t ns, int64_t moved) {
  for (last_ = 0; last_ < entries_.size(); ++last_)
    if (entries_[last_].first == k) return entries_[last_].second.add(ns, moved);
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
// The longest of end - start over the threads.
int64_t longest(const std::vector<ThreadSummary>& threads, int64_t ThreadSummary::*end, int64_t ThreadSummary::*start) {
  int64_t most = 0;
  for (const ThreadSummary& t : threads) most = std::max(most, t.*end - t.*start);
  return most;
}
}  // namespace

int64_t Report::after_startup_ns() const {
  return longest(per_thread, &ThreadSummary::replay_ns, &ThreadSummary::startup_ns);
}

int64_t Report::traced_after_startup_ns() const {
  return longest(per_thread, &ThreadSummary::traced_ns, &ThreadSummary::traced_startup_ns);
}

namespace {

constexpr size_t kMaxThreadRows = 64;

double pct(int64_t got, int64_t want) { return want > 0 ? double(got - want) / double(want) * 100.0 : 0.0; }

// Where the predicted time went, summed over threads.
void print_breakdown(std::ostream& out, const Report& r) {
  ThreadSummary sum;
  for (const ThreadSummary& t : r.per_thread) {
    sum.io_ns += t.io_ns, sum.compute_ns += t.compute_ns, sum.comm_ns += t.comm_ns, sum.wait_ns += t.wait_ns;
    sum.traced_io_ns += t.traced_io_ns, sum.traced_compute_ns += t.traced_compute_ns;
    sum.traced_mpi_ns += t.traced_mpi_ns;
    sum.slept_waits += t.slept_waits, sum.late_ns += t.late_ns, sum.cpu_wait_ns += t.cpu_wait_ns;
  }
  double all = double(sum.io_ns + sum.compute_ns + sum.comm_ns + sum.wait_ns);
  auto share = [&](int64_t v) { return all > 0 ? double(v) / all * 100 : 0.0; };
  fmt::print(out, "breakdown    (all threads) I/O {:.6f} s ({:.1f}%), compute {:.6f} s ({:.1f}%), ", sum.io_ns / 1e9,
             share(sum.io_ns), sum.compute_ns / 1e9, share(sum.compute_ns));
  fmt::print(out, "communication {:.6f} s ({:.1f}%), waiting {:.6f} s ({:.1f}%)\n", sum.comm_ns / 1e9,
             share(sum.comm_ns), sum.wait_ns / 1e9, share(sum.wait_ns));
  fmt::print(out, "traced       (all threads) I/O {:.6f} s, compute {:.6f} s, MPI {:.6f} s\n", sum.traced_io_ns / 1e9,
             sum.traced_compute_ns / 1e9, sum.traced_mpi_ns / 1e9);
  fmt::print(out,
             "cpu wait     (all threads) replay {:.6f} s, traced {:.6f} s (ready to run, waiting for a CPU; traced: "
             "left out of compute)\n",
             sum.cpu_wait_ns / 1e9, r.cpu_wait_ns / 1e9);
  if (sum.slept_waits > 0)
    fmt::print(out,
               "wake-ups     {} waits (collectives, receives) slept past the poll, {:.6f} s late beyond their cost "
               "(paid back)\n",
               sum.slept_waits, sum.late_ns / 1e9);
}

void print_threads(std::ostream& out, const Report& r) {
  if (r.per_thread.empty()) return;
  if (r.per_thread.size() <= kMaxThreadRows) {
    fmt::print(out, "\n{:>6} {:>6} {:>11} {:>11} {:>8} {:>10} | {:>9} {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9}\n", "rank",
               "thread", "predicted_s", "traced_s", "error", "events", "io_s", "compute_s", "comm_s", "wait_s",
               "tr_io_s", "tr_comp_s", "tr_mpi_s");
    for (const ThreadSummary& t : r.per_thread)
      fmt::print(out,
                 "{:>6} {:>6} {:>11.6f} {:>11.6f} {:>+7.2f}% {:>10} | {:>9.4f} {:>9.4f} {:>9.4f} {:>9.4f} | {:>9.4f} "
                 "{:>9.4f} {:>9.4f}\n",
                 t.rank, t.thread, t.replay_ns / 1e9, t.traced_ns / 1e9, pct(t.replay_ns, t.traced_ns), t.events,
                 t.io_ns / 1e9, t.compute_ns / 1e9, t.comm_ns / 1e9, t.wait_ns / 1e9, t.traced_io_ns / 1e9,
                 t.traced_compute_ns / 1e9, t.traced_mpi_ns / 1e9);
    fmt::print(out,
               "(predicted = io + compute + comm + wait, less the replay's unpaid lateness; traced: I/O calls, gaps, "
               "MPI calls with their waiting)\n");
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

// A file at another size than the plan's is a replay that went wrong (a
// lost write, a truncation run late), not a timing to report quietly.
void print_sizes(std::ostream& out, const SizeCheck& c) {
  if (c.checked < 0) return;
  if (c.mismatches.empty()) return fmt::print(out, "final sizes: {} files checked, all as the plan says\n", c.checked);
  fmt::print(out, "final sizes: {} files checked, {} at other sizes than the plan says:\n", c.checked,
             c.mismatches.size());
  for (size_t i = 0; i < c.mismatches.size() && i < ErrorLog::kKept; ++i)
    fmt::print(out, "  {}\n", describe(c.mismatches[i]));
  if (c.mismatches.size() > ErrorLog::kKept) fmt::print(out, "  ... {} more\n", c.mismatches.size() - ErrorLog::kKept);
}

}  // namespace

void print_text(std::ostream& out, const Report& r) {
  fmt::print(out, "replay of {} on {}: {} ranks, {} threads\n", r.plan, r.fs, r.ranks, r.threads);
  fmt::print(out, "traced time  {:>12.6f} s\n", r.traced_ns / 1e9);
  fmt::print(out, "replay time  {:>12.6f} s (the predicted time)\n", r.replay_ns / 1e9);
  if (r.wall_ns > r.replay_ns)
    fmt::print(out, "wall time    {:>12.6f} s (less the replay's own lateness no gap or wait absorbed)\n",
               r.wall_ns / 1e9);
  fmt::print(out, "setup time   {:>12.6f} s (target prepared and {} threads running; {:.3f} s CPU)\n", r.setup_ns / 1e9,
             r.threads, r.setup_cpu_ns / 1e9);
  fmt::print(out, "error        {:>+12.2f} % (predicted against traced)\n", r.error_pct());
  if (!r.placement.empty()) fmt::print(out, "placement    {}\n", r.placement);
  bool started = std::any_of(r.per_thread.begin(), r.per_thread.end(), [](const auto& t) { return t.startup_ns > 0; });
  if (started)
    fmt::print(
        out,
        "after start-up {:>10.6f} s predicted, {:.6f} s traced ({:+.2f} %): from MPI_Init's return on\n"
        "             (the launch and MPI_Init vary from one launch to the next; the rest is the application's)\n",
        r.after_startup_ns() / 1e9, r.traced_after_startup_ns() / 1e9,
        pct(r.after_startup_ns(), r.traced_after_startup_ns()));
  print_breakdown(out, r);
  print_threads(out, r);
  print_ops(out, r);
  fmt::print(out, "\nfailed calls: {}", r.errors);
  if (r.skipped) fmt::print(out, " (and {} calls that had failed when traced, replayed as their duration)", r.skipped);
  fmt::print(out, "\n");
  for (const std::string& e : r.first_errors) fmt::print(out, "  {}\n", e);
  if (r.errors > r.first_errors.size()) fmt::print(out, "  ... {} more\n", r.errors - r.first_errors.size());
  print_sizes(out, r.sizes);
  for (const std::string& w : r.warnings) fmt::print(out, "warning: {}\n", w);
}

std::string size_failure(const Report& r) {
  size_t n = r.sizes.mismatches.size();
  if (n == 0) return {};
  return fmt::format(
      "{} of {} replayed files ended at other sizes than the plan says: the replay did not do what "
      "the traced run did (first: {})",
      n, r.sizes.checked, describe(r.sizes.mismatches[0]));
}

namespace {
nlohmann::json thread_json(const ThreadSummary& t) {
  return {
      {"rank", t.rank},
      {"thread", t.thread},
      {"replay_s", t.replay_ns / 1e9},
      {"traced_s", t.traced_ns / 1e9},
      {"error_pct", pct(t.replay_ns, t.traced_ns)},
      {"startup_s", t.startup_ns / 1e9},
      {"traced_startup_s", t.traced_startup_ns / 1e9},
      {"events", t.events},
      {"cpus", t.cpus},
      {"first_cpu", t.first_cpu},
      {"predicted",
       {{"io_s", t.io_ns / 1e9},
        {"compute_s", t.compute_ns / 1e9},
        {"comm_s", t.comm_ns / 1e9},
        {"charged_s", t.charged_ns / 1e9},
        {"costs_s", t.costs_ns / 1e9},
        {"costed_calls", t.costed_calls},
        {"wait_s", t.wait_ns / 1e9},
        {"cpu_wait_s", t.cpu_wait_ns / 1e9},
        {"sender_wait_s", t.sender_wait_ns / 1e9},
        {"slept_waits", t.slept_waits},
        {"late_s", t.late_ns / 1e9},
        {"own_s", t.own_ns / 1e9},
        {"unpaid_s", t.unpaid_ns / 1e9}}},
      {"traced",
       {{"io_s", t.traced_io_ns / 1e9}, {"compute_s", t.traced_compute_ns / 1e9}, {"mpi_s", t.traced_mpi_ns / 1e9}}}};
}

nlohmann::json final_sizes_json(const SizeCheck& sizes) {
  nlohmann::json wrong = nlohmann::json::array();
  for (const SizeMismatch& m : sizes.mismatches)
    wrong.push_back(
        {{"path", m.path},
         {"size", m.got},
         {"expected_min", m.want.lower},
         {"expected_max", m.want.upper == kAnySize ? nlohmann::json(nullptr) : nlohmann::json(m.want.upper)}});
  return {{"checked", sizes.checked}, {"mismatches", std::move(wrong)}};
}
}  // namespace

nlohmann::json to_json(const Report& r) {
  nlohmann::json j;
  j["plan"] = r.plan;
  j["fs"] = r.fs;
  j["ranks"] = r.ranks;
  j["threads"] = r.threads;
  j["traced_s"] = r.traced_ns / 1e9;
  j["traced_cpu_wait_s"] = r.cpu_wait_ns / 1e9;
  j["replay_s"] = r.replay_ns / 1e9;
  j["predicted_s"] = r.replay_ns / 1e9;
  j["wall_s"] = std::max(r.wall_ns, r.replay_ns) / 1e9;
  j["setup_s"] = r.setup_ns / 1e9;
  j["setup_cpu_s"] = r.setup_cpu_ns / 1e9;
  j["error_pct"] = r.error_pct();
  j["after_startup_s"] = r.after_startup_ns() / 1e9;
  j["traced_after_startup_s"] = r.traced_after_startup_ns() / 1e9;
  j["placement"] = r.placement;
  nlohmann::json rows = nlohmann::json::array();
  for (const ThreadSummary& t : r.per_thread) rows.push_back(thread_json(t));
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
  j["final_sizes"] = final_sizes_json(r.sizes);
  j["comm_costs"] = r.comm_costs.is_null() ? nlohmann::json::array() : r.comm_costs;
  return j;
}

void write_io_log(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw ToolError("cannot write --io-log " + path);
}

void write_json(const std::string& path, const Report& r) {
  std::string text = to_json(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  try {
    trace::write_file_atomic(path, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  } catch (const std::exception& e) {
    throw ToolError(std::string("--json: ") + e.what());
  }
}

}  // namespace mpior::replay
