#include "postproc/romio_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "trace/tool_error.hpp"

namespace mpior::postproc {

namespace {

// cb_config_list_lex's tokens.
enum class Token { eos, wildcard, string, comma, colon, error };

struct Lexer {
  std::string_view rest;
  std::string value;  // of the last string token
  Token next() {
    if (rest.empty()) return Token::eos;
    char c = rest.front();
    if (c == ':' || c == ',') {
      rest.remove_prefix(1);
      return c == ':' ? Token::colon : Token::comma;
    }
    size_t len = std::min(rest.find_first_of(":,"), rest.size());
    if (c == '*') {
      if (len != 1) return Token::error;  // "*" followed by more than a delimiter
      rest.remove_prefix(1);
      return Token::wildcard;
    }
    value = std::string(rest.substr(0, len));
    rest.remove_prefix(len);
    return Token::string;
  }
};

// get_max_procs: the count after a name; -1 where ROMIO's parse goes wrong.
// A count that is not a number is 1, as strtol leaves it to ROMIO.
int max_procs(Lexer& lx, int cb_nodes, bool* garbage) {
  Token t = lx.next();
  if (t == Token::eos || t == Token::comma) return 1;
  if (t != Token::colon) return -1;
  t = lx.next();
  if (t != Token::wildcard && t != Token::string) return -1;
  int m = cb_nodes;
  if (t == Token::string) {
    char* end = nullptr;
    m = int(std::strtol(lx.value.c_str(), &end, 10));
    if (*end != '\0') m = 1, *garbage = true;
  }
  t = lx.next();
  if (t != Token::comma && t != Token::eos) return -1;
  return m < 0 ? -1 : m;
}

// The procnames ROMIO matches against: host names by rank, and which are
// taken or retired.
struct Names {
  const std::vector<std::string>& hosts;
  std::vector<char> used;
  std::vector<size_t> out;  // indexes taken, in order
  size_t want;
  int find(const std::string& name, int from) const {
    for (size_t i = size_t(std::max(from, 0)); i < hosts.size(); ++i)
      if (!used[i] && hosts[i] == name) return int(i);
    return -1;
  }
  // match_this_proc: up to `max` more of `name` from `cur`, then every
  // other one of that name retired.
  void match_this(const std::string& name, int cur, int max) {
    int to_take = std::min(max, int(want - out.size()));
    for (; to_take > 0; --to_take) {
      cur = find(name, cur);
      if (cur < 0) return;
      out.push_back(size_t(cur));
      used[size_t(cur)] = 1;
      ++cur;
    }
    while ((cur = find(name, cur)) >= 0) used[size_t(cur++)] = 1;
  }
  // match_procs for a wildcard entry "*:max".
  void match_any(int max) {
    if (max == 0) return std::fill(used.begin(), used.end(), char(1));
    for (size_t w = 0; out.size() < want; ++w) {
      while (w < hosts.size() && used[w]) ++w;
      if (w == hosts.size()) return;
      out.push_back(w);
      match_this(hosts[w], int(w) + 1, max - 1);
      used[w] = 1;
    }
  }
};

// ADIOI_cb_config_list_parse over `hosts` (by rank); `strict` throws where
// ROMIO would stop with "error parsing config list" or read a count that is
// no number as 1.
std::vector<size_t> parse(const std::string& list, const std::vector<std::string>& hosts, int cb_nodes, bool strict) {
  Names names{hosts, std::vector<char>(hosts.size(), 0), {}, std::min(size_t(cb_nodes), hosts.size())};
  if (list == "*:*") {
    for (size_t i = 0; i < names.want; ++i) names.out.push_back(i);
    return names.out;
  }
  Lexer lx{list, {}};
  while (names.out.size() < names.want || strict) {
    Token t = lx.next();
    if (t == Token::eos) break;
    bool garbage = false;
    std::optional<std::string> name;
    if (t == Token::string) name = lx.value;
    int m = t == Token::wildcard || t == Token::string ? max_procs(lx, cb_nodes, &garbage) : -1;
    if (strict && (m < 0 || garbage))
      throw ToolError(
          fmt::format("cb_config_list '{}': ROMIO cannot parse it (entries are NAME or *, each with an "
                      "optional :COUNT or :*, separated by commas)",
                      list));
    if (t != Token::wildcard && t != Token::string) break;
    if (name)
      names.match_this(*name, 0, m);
    else
      names.match_any(m);
  }
  return names.out;
}

}  // namespace

CbMode parse_cb_mode(std::string_view value, std::string_view hint) {
  if (value == "automatic") return CbMode::automatic;
  if (value == "enable") return CbMode::enable;
  if (value == "disable") return CbMode::disable;
  throw ToolError(fmt::format("{} '{}': ROMIO takes automatic, enable or disable", hint, value));
}

const char* cb_mode_name(CbMode m) {
  return m == CbMode::automatic ? "automatic" : m == CbMode::enable ? "enable" : "disable";
}

void check_hints(const CollectiveHints& h) {
  if (h.cb_nodes < 1) throw ToolError("the number of aggregators (cb_nodes) must be at least 1");
  if (h.cb_buffer_size < 1) throw ToolError("the collective buffer size must be at least one byte");
  if (h.striping_unit < 0) throw ToolError("the striping unit must not be negative");
  if (h.striping_factor < 0) throw ToolError("the striping factor must be at least 1");
  if (h.striping_factor > 0 && h.striping_unit < 1)
    throw ToolError("a striping factor needs a striping unit: ROMIO's Lustre driver stripes by both");
  if (h.min_fdomain_size < 0) throw ToolError("romio_min_fdomain_size must not be negative");
  if (h.lustre_co_ratio < 1) throw ToolError("romio_lustre_co_ratio must be at least 1: no stripe would be written");
  if (h.lustre_coll_threshold < 0) throw ToolError("romio_lustre_coll_threshold must not be negative");
  if (h.cb_config_list.empty()) throw ToolError("cb_config_list is empty: ROMIO would find no aggregator");
  parse(h.cb_config_list, {}, h.cb_nodes, true);
}

std::vector<int32_t> aggregator_ranks(const std::vector<int32_t>& ranks, const std::vector<std::string>& hosts,
                                      const CollectiveHints& h) {
  std::vector<int32_t> out;
  for (size_t i : parse(h.cb_config_list, hosts, h.cb_nodes, false)) out.push_back(ranks[i]);
  if (out.empty())
    throw ToolError(
        fmt::format("cb_config_list '{}' takes no rank on the hosts of the trace ({}...): ROMIO's open "
                    "would fail",
                    h.cb_config_list, hosts.empty() ? "none" : hosts.front()));
  return out;
}

bool interleaved(const std::vector<Request>& requests) {
  for (size_t i = 1; i < requests.size(); ++i)
    if (requests[i].first < requests[i - 1].last && requests[i].first <= requests[i].last) return true;
  return false;
}

std::vector<ByteRange> file_domains(int64_t lo, int64_t hi, int count, int64_t striping_unit,
                                    int64_t min_fdomain_size) {
  std::vector<ByteRange> out;
  if (count < 1 || hi <= lo) return out;
  int64_t size = std::max((hi - lo + count - 1) / count, min_fdomain_size);
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
