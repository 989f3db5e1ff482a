#include "study/spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

namespace mpior::study {

namespace {

// A whole decimal number with an optional K/M/G (binary) suffix; -1 if not.
int64_t parse_size(const std::string& s) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return -1;
  size_t end = 0;
  int64_t v = 0;
  try {
    v = std::stoll(s, &end);
  } catch (const std::exception&) {
    return -1;
  }
  std::string rest = s.substr(end);
  if (rest.empty()) return v;
  if (rest.size() != 1) return -1;
  switch (std::toupper(static_cast<unsigned char>(rest[0]))) {
    case 'K':
      return v << 10;
    case 'M':
      return v << 20;
    case 'G':
      return v << 30;
    default:
      return -1;
  }
}

bool is_name(const std::string& s) {
  return !s.empty() && s.size() <= 32 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_'; });
}

}  // namespace

std::vector<int> parse_ranks(const std::string& text) {
  std::set<int> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    int64_t v = parse_size(item);
    if (v < 1 || v > (int64_t(1) << 24) || item.find_first_not_of("0123456789") != std::string::npos)
      throw ToolError(
          fmt::format("--ranks '{}': '{}' is not a rank count (whole numbers >= 1, comma separated)", text, item));
    out.insert(int(v));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return {out.begin(), out.end()};
}

Target parse_target(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || !is_name(text.substr(0, eq)) || eq + 1 == text.size())
    throw ToolError(fmt::format("--target '{}': expected NAME=DIR (NAME of letters, digits, - or _)", text));
  return {text.substr(0, eq), text.substr(eq + 1)};
}

Setting parse_setting(const std::string& text, int index) {
  Setting s{fmt::format("set{}", index), text, 0};
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t eq = item.find('=');
    std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "cb_buffer_size") {
      s.cb_buffer_size = parse_size(value);
      if (s.cb_buffer_size < 1)
        throw ToolError(fmt::format("--set '{}': cb_buffer_size needs a size in bytes (K, M, G allowed)", text));
    } else if (key == "cb_nodes") {
      int64_t n = parse_size(value);
      if (n < 1 || n > (int64_t(1) << 24) || value.find_first_not_of("0123456789") != std::string::npos)
        throw ToolError(fmt::format("--set '{}': cb_nodes needs a whole number of aggregators >= 1", text));
      s.cb_nodes = int(n);
    } else if (key == "striping_unit") {
      s.striping_unit = parse_size(value);
      if (s.striping_unit < 1)
        throw ToolError(fmt::format("--set '{}': striping_unit needs a size in bytes (K, M, G allowed)", text));
    } else if (key.starts_with("romio_")) {
      // Extrapolation models none of them, so only an MPI replay could; the
      // study keeps to the hints it can say what they change.
      throw ToolError(
          fmt::format("--set '{}': {} cannot be studied; supported: cb_buffer_size=SIZE (the "
                      "max-blocksize rule), cb_nodes=N (ROMIO's aggregators, in an MPI replay)",
                      text, key));
    } else {
      throw ToolError(
          fmt::format("--set '{}': unknown hint '{}' (known: cb_buffer_size, cb_nodes, "
                      "striping_unit)",
                      text, key));
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  // The domains it aligns are the ones dealt to cb_nodes aggregators.
  if (s.striping_unit > 0 && s.cb_nodes == 0)
    throw ToolError(fmt::format("--set '{}': striping_unit needs cb_nodes in the same setting", text));
  return s;
}

ResultFile parse_result(const std::string& text) {
  size_t colon = text.find(':'), eq = text.find('=');
  ResultFile r;
  if (colon != std::string::npos && eq != std::string::npos && colon < eq) {
    int64_t n = parse_size(text.substr(0, colon));
    std::string name = text.substr(colon + 1, eq - colon - 1);
    size_t second = name.find(':');
    r = {int(n), name.substr(0, second), second == std::string::npos ? "base" : name.substr(second + 1),
         text.substr(eq + 1)};
    if (n >= 1 && text.substr(0, colon).find_first_not_of("0123456789") == std::string::npos && is_name(r.target) &&
        is_name(r.setting) && !r.path.empty())
      return r;
  }
  throw ToolError(fmt::format("--result '{}': expected RANKS:TARGET[:SETTING]=REPLAY.json", text));
}

std::vector<std::string> Setting::hint_args() const {
  // An MPI replay issues MPI_File_* calls, not the plan's POSIX requests
  // the max-blocksize rule split: the buffer goes to ROMIO as a hint too.
  std::vector<std::string> out;
  if (cb_buffer_size > 0) out = {"--hint", fmt::format("cb_buffer_size={}", cb_buffer_size)};
  // ROMIO's default cb_config_list (*:1) takes one aggregator per node:
  // with several ranks a node, cb_nodes=N would give fewer than N.
  if (cb_nodes > 0)
    out.insert(out.end(), {"--hint", fmt::format("cb_nodes={}", cb_nodes), "--hint", "cb_config_list=*:*"});
  if (striping_unit > 0) out.insert(out.end(), {"--hint", fmt::format("striping_unit={}", striping_unit)});
  return out;
}

std::string ResultFile::id() const { return Point{setting, target, ranks, false, false}.id(); }

std::string Point::id() const { return fmt::format("{}-n{}-{}", setting, ranks, target); }

std::string plan_name(const Setting& s, int ranks) {
  return s.name == "base" ? fmt::format("n{}", ranks) : fmt::format("n{}-{}", ranks, s.name);
}

Work make_work(const std::vector<int>& ranks, const std::vector<int>& traced, const std::vector<Target>& targets,
               const std::vector<Setting>& settings, int max_threads) {
  Work w;
  std::set<int> all(ranks.begin(), ranks.end());
  w.ranks.assign(all.begin(), all.end());
  auto is_traced = [&](int n) { return std::find(traced.begin(), traced.end(), n) != traced.end(); };
  for (const Setting& s : settings)
    for (int n : w.ranks) {
      // A what-if changes the extrapolated plans only: traced plans are what ran.
      if (s.name != "base" && is_traced(n)) continue;
      for (const Target& t : targets) w.points.push_back({s.name, t.name, n, is_traced(n), n > max_threads});
    }
  for (int n : traced) w.trust.push_back({"base", "reference", n, true, false});
  return w;
}

}  // namespace mpior::study
