#include "replayer/bind.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <map>

namespace mpior::replay {

bool parse_bind_mode(const std::string& text, BindMode& mode) {
  static const std::map<std::string, BindMode> modes{
      {"auto", BindMode::as_traced}, {"none", BindMode::none}, {"core", BindMode::core}};
  auto it = modes.find(text);
  if (it == modes.end()) return false;
  mode = it->second;
  return true;
}

namespace {

std::vector<int> own_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

// The CPUs each rank asks for, in first-appearance order: 0 for a rank left free.
std::vector<std::pair<int32_t, int32_t>> rank_demands(const trace::Plan& plan, const std::vector<int32_t>& ranks,
                                                      BindMode mode) {
  std::vector<std::pair<int32_t, int32_t>> out;
  std::vector<bool> seen(plan.ranks.size());  // a linear scan of out per thread is quadratic at 8,192 ranks
  for (int32_t r : ranks) {
    if (seen[size_t(r)]) continue;
    seen[size_t(r)] = true;
    const trace::CpuPlacement& p = plan.ranks[size_t(r)].placement;
    out.emplace_back(r, mode == BindMode::core ? 1 : p.bound() ? p.allowed : 0);
  }
  return out;
}

std::string cpu_list_text(const std::vector<int>& cpus, size_t from, size_t count) {
  std::string s;
  for (size_t i = from; i < from + count; ++i) s += (s.empty() ? "" : ",") + std::to_string(cpus[i]);
  return s;
}

}  // namespace

ThreadPlacement place_threads(const trace::Plan& plan, const std::vector<int32_t>& thread_ranks, BindMode mode,
                              bool in_mpi_process) {
  ThreadPlacement out;
  if (mode == BindMode::none) return out.text = "unbound (--bind none)", out;
  auto demands = rank_demands(plan, thread_ranks, mode);
  int64_t need = 0, bound_ranks = 0;
  for (const auto& d : demands) need += d.second, bound_ranks += d.second > 0;
  if (need == 0) {
    bool known = std::all_of(demands.begin(), demands.end(),
                             [&](const auto& d) { return plan.ranks[size_t(d.first)].placement.allowed > 0; });
    return out.text = known ? "unbound, as the traced ranks ran" : "unbound (the trace does not say how its ranks ran)",
           out;
  }
  std::vector<int> cpus = own_cpus();
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (in_mpi_process && online > 0 && int64_t(cpus.size()) >= online)
    return out.text = "unbound: mpirun left this process every CPU (launch with -bind-to core to bind)", out;
  if (need > int64_t(cpus.size()))
    return out.text = fmt::format("unbound: {} ranks would need {} CPUs, this replay may use {}", bound_ranks, need,
                                  cpus.size()),
           out;
  std::map<int32_t, cpu_set_t> by_rank;
  std::string blocks;
  size_t next = 0, shown = 0;
  for (const auto& [rank, count] : demands) {
    cpu_set_t set;
    CPU_ZERO(&set);
    size_t from = count > 0 ? next : 0, n = count > 0 ? size_t(count) : cpus.size();
    for (size_t i = from; i < from + n; ++i) CPU_SET(cpus[i], &set);
    if (count > 0 && shown++ < 4)
      blocks += fmt::format("{}rank {} on CPU{} {}", blocks.empty() ? "" : "; ", rank, n > 1 ? "s" : "",
                            cpu_list_text(cpus, from, n));
    next += size_t(count);
    by_rank[rank] = set;
  }
  for (int32_t r : thread_ranks) out.sets.push_back(by_rank[r]);
  out.text = fmt::format("{} of {} ranks bound{} ({}{})", bound_ranks, demands.size(),
                         mode == BindMode::core ? ", one CPU each (--bind core)" : ", as traced", blocks,
                         shown > 4 ? "; ..." : "");
  return out;
}

ThreadCpus current_thread_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  ThreadCpus t{CPU_COUNT(&set), -1};
  for (int c = 0; c < CPU_SETSIZE && t.first < 0; ++c)
    if (CPU_ISSET(c, &set)) t.first = c;
  return t;
}

}  // namespace mpior::replay
