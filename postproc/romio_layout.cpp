#include "postproc/romio_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "trace/tool_error.hpp"

namespace mpior::postproc {

namespace {

// The m of "*:m" ("*" alone is "*:1"); 0 for "*:*".
int per_node(const std::string& list) {
  if (list == "*:*") return 0;
  if (list == "*") return 1;  // no count: one a node
  int m = 0;
  const char* end = list.data() + list.size();
  if (list.size() > 2 && list.starts_with("*:")) {
    auto [p, ec] = std::from_chars(list.data() + 2, end, m);
    if (ec == std::errc() && p == end && m >= 1) return m;
  }
  throw ToolError(
      fmt::format("cb_config_list '{}': only '*:*' and '*:N' (N at least 1) are modelled, not named hosts", list));
}

}  // namespace

void check_hints(const CollectiveHints& h) {
  if (h.cb_nodes < 1) throw ToolError("the number of aggregators (cb_nodes) must be at least 1");
  if (h.cb_buffer_size < 1) throw ToolError("the collective buffer size must be at least one byte");
  if (h.striping_unit < 0) throw ToolError("the striping unit must not be negative");
  per_node(h.cb_config_list);
}

std::vector<int32_t> aggregator_ranks(const std::vector<int32_t>& ranks, const std::vector<std::string>& hosts,
                                      const CollectiveHints& h) {
  size_t want = std::min(size_t(h.cb_nodes), ranks.size());
  int m = per_node(h.cb_config_list);
  if (m == 0) return {ranks.begin(), ranks.begin() + ptrdiff_t(want)};  // ROMIO's shortcut: the first ranks
  std::vector<int32_t> out;
  std::map<std::string, int> taken;  // node -> aggregators taken on it, once visited
  for (size_t i = 0; i < ranks.size() && out.size() < want; ++i) {
    if (taken.contains(hosts[i])) continue;  // a visited node gives nothing more
    int& n = taken[hosts[i]];
    for (size_t k = i; k < ranks.size() && n < m && out.size() < want; ++k)
      if (hosts[k] == hosts[i]) out.push_back(ranks[k]), ++n;
  }
  return out;
}

std::vector<ByteRange> file_domains(int64_t lo, int64_t hi, int count, int64_t striping_unit) {
  std::vector<ByteRange> out;
  if (count < 1 || hi <= lo) return out;
  int64_t size = (hi - lo + count - 1) / count;
  int64_t begin = lo;
  for (int j = 0; j < count; ++j) {
    int64_t end = lo + size * (j + 1);
    if (striping_unit > 0) {  // to the nearest stripe boundary, ties upward
      int64_t front = end % striping_unit, back = striping_unit - front;
      end = front < back ? end - front : end + back;
    }
    if (j == count - 1) end = hi;
    end = std::min(end, hi);
    int64_t b = std::min(begin, hi);
    out.emplace_back(b, std::max(b, end));
    begin = std::max(begin, end);
  }
  return out;
}

}  // namespace mpior::postproc
