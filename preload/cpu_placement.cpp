#include "preload/cpu_placement.hpp"

#include <sched.h>
#include <unistd.h>

#include <charconv>
#include <string>

#include "preload/proc_text.hpp"

namespace mpior::preload {

namespace {

bool parse_cpu(std::string_view s, long& v) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() && v >= 0;
}

// The cpuset file of this process's cgroup: v2's cpuset.cpus.effective, or
// v1's cpuset.effective_cpus, from /proc/self/cgroup's path.
std::string cgroup_cpus() {
  std::string lines = read_text("/proc/self/cgroup");
  size_t pos = 0;
  while (pos < lines.size()) {
    size_t end = lines.find('\n', pos);
    if (end == std::string::npos) end = lines.size();
    std::string_view line(lines.data() + pos, end - pos);
    pos = end + 1;
    size_t a = line.find(':'), b = a == line.npos ? line.npos : line.find(':', a + 1);
    if (b == line.npos) continue;
    std::string_view controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    std::string dir;
    if (line.substr(0, a) == "0" && controllers.empty())
      dir = "/sys/fs/cgroup" + std::string(path) + "/cpuset.cpus.effective";
    else if (controllers == "cpuset")
      dir = "/sys/fs/cgroup/cpuset" + std::string(path) + "/cpuset.effective_cpus";
    else
      continue;
    std::string text = read_text(dir.c_str());
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    if (!text.empty()) return text;
  }
  return {};
}

}  // namespace

int count_cpu_list(std::string_view list) {
  int count = 0;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view part = list.substr(0, comma);
    list = comma == list.npos ? std::string_view() : list.substr(comma + 1);
    size_t dash = part.find('-');
    long lo = 0, hi = 0;
    if (!parse_cpu(part.substr(0, dash), lo)) return -1;
    if (dash == part.npos)
      hi = lo;
    else if (!parse_cpu(part.substr(dash + 1), hi) || hi < lo)
      return -1;
    count += int(hi - lo + 1);
  }
  return count;
}

trace::CpuPlacement current_placement() {
  trace::CpuPlacement p;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) p.allowed = CPU_COUNT(&set);
  int cgroup = count_cpu_list(cgroup_cpus());
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  p.online = cgroup > 0 ? cgroup : online > 0 ? int(online) : 0;
  if (p.allowed > p.online) p.online = p.allowed;  // a cpuset read from another view
  return p;
}

}  // namespace mpior::preload
