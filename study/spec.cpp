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

namespace {

// "k=v,k=v" as (key, value) pairs; an item without '=' continues the value
// before it (cb_config_list=a:1,b:2).
std::vector<std::pair<std::string, std::string>> setting_items(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t eq = item.find('=');
    if (eq == std::string::npos && !out.empty() && out.back().first == "cb_config_list")
      out.back().second += "," + item;
    else
      out.emplace_back(item.substr(0, eq), eq == std::string::npos ? "" : item.substr(eq + 1));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

void apply_hint(Setting& s, const std::string& key, const std::string& value, const std::string& text) {
  auto size_of = [&](int64_t min) {
    int64_t v = parse_size(value);
    if (v < min)
      throw ToolError(
          fmt::format("--set '{}': {} needs a size in bytes{} (K, M, G allowed)", text, key, min == 0 ? " >= 0" : ""));
    return v;
  };
  auto count_of = [&](const char* what) {
    int64_t n = parse_size(value);
    if (n < 1 || n > (int64_t(1) << 24) || value.find_first_not_of("0123456789") != std::string::npos)
      throw ToolError(fmt::format("--set '{}': {} needs a whole number of {} >= 1", text, key, what));
    return int(n);
  };
  if (key == "cb_buffer_size") {
    s.cb_buffer_size = size_of(1);
  } else if (key == "cb_nodes") {
    s.cb_nodes = count_of("aggregators");
  } else if (key == "striping_unit") {
    s.striping_unit = size_of(1);
  } else if (key == "striping_factor") {
    s.striping_factor = count_of("targets");
  } else if (key == "romio_lustre_co_ratio") {
    s.lustre_co_ratio = count_of("aggregators a target");
  } else if (key == "romio_lustre_coll_threshold") {
    s.lustre_coll_threshold = size_of(0);
    if (s.lustre_coll_threshold > INT32_MAX)
      throw ToolError(fmt::format("--set '{}': {} is an int hint, at most {}", text, key, INT32_MAX));
  } else if (key == "romio_lustre_ds_in_coll") {
    if (value != "automatic" && value != "enable" && value != "disable")
      throw ToolError(fmt::format("--set '{}': {} takes automatic, enable or disable", text, key));
    s.lustre_ds_in_coll = value;
  } else if (key == "romio_min_fdomain_size") {
    s.min_fdomain_size = size_of(0);
  } else if (key == "cb_config_list") {
    if (value.empty()) throw ToolError(fmt::format("--set '{}': cb_config_list needs a list", text));
    s.cb_config_list = value;
  } else if (std::string* mode = key == "romio_cb_read"    ? &s.cb_read
                                 : key == "romio_cb_write" ? &s.cb_write
                                 : key == "romio_ds_read"  ? &s.ds_read
                                 : key == "romio_ds_write" ? &s.ds_write
                                                           : nullptr) {
    if (value != "automatic" && value != "enable" && value != "disable")
      throw ToolError(fmt::format("--set '{}': {} takes automatic, enable or disable", text, key));
    *mode = value;
  } else if (key == "ind_rd_buffer_size" || key == "ind_wr_buffer_size") {
    (key == "ind_rd_buffer_size" ? s.ind_rd_buffer_size : s.ind_wr_buffer_size) = size_of(1);
  } else {
    throw ToolError(
        fmt::format("--set '{}': {} hint '{}' (known: cb_buffer_size, cb_nodes, striping_unit, striping_factor, "
                    "romio_lustre_co_ratio, romio_lustre_coll_threshold, romio_lustre_ds_in_coll, cb_config_list, "
                    "romio_cb_read, romio_cb_write, romio_min_fdomain_size, romio_ds_read, romio_ds_write, "
                    "ind_rd_buffer_size, ind_wr_buffer_size)",
                    text, key.starts_with("romio_") ? "unsupported" : "unknown", key));
  }
}

}  // namespace

Setting parse_setting(const std::string& text, int index) {
  Setting s;
  s.name = fmt::format("set{}", index), s.label = text;
  for (const auto& [key, value] : setting_items(text)) apply_hint(s, key, value, text);
  // They act through the collective calls dealt to cb_nodes aggregators.
  bool needs_nodes = s.striping_unit > 0 || s.min_fdomain_size > 0 || !s.cb_config_list.empty() || !s.cb_read.empty() ||
                     !s.cb_write.empty();
  if (s.striping_factor > 0 && s.striping_unit == 0)
    throw ToolError(fmt::format("--set '{}': striping_factor needs striping_unit in the same setting", text));
  if ((s.lustre_co_ratio > 0 || s.lustre_coll_threshold >= 0 || !s.lustre_ds_in_coll.empty()) && s.striping_factor == 0)
    throw ToolError(fmt::format("--set '{}': romio_lustre_* need striping_factor in the same setting", text));
  if (needs_nodes && s.cb_nodes == 0)
    throw ToolError(
        fmt::format("--set '{}': striping_unit, cb_config_list, romio_min_fdomain_size and romio_cb_* need "
                    "cb_nodes in the same setting",
                    text));
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
    out.insert(out.end(), {"--hint", fmt::format("cb_nodes={}", cb_nodes), "--hint",
                           fmt::format("cb_config_list={}", config_list())});
  if (striping_unit > 0) out.insert(out.end(), {"--hint", fmt::format("striping_unit={}", striping_unit)});
  if (striping_factor > 0) out.insert(out.end(), {"--hint", fmt::format("striping_factor={}", striping_factor)});
  if (lustre_co_ratio > 0) out.insert(out.end(), {"--hint", fmt::format("romio_lustre_co_ratio={}", lustre_co_ratio)});
  if (lustre_coll_threshold >= 0)
    out.insert(out.end(), {"--hint", fmt::format("romio_lustre_coll_threshold={}", lustre_coll_threshold)});
  if (!lustre_ds_in_coll.empty()) out.insert(out.end(), {"--hint", "romio_lustre_ds_in_coll=" + lustre_ds_in_coll});
  if (min_fdomain_size > 0)
    out.insert(out.end(), {"--hint", fmt::format("romio_min_fdomain_size={}", min_fdomain_size)});
  if (!cb_read.empty()) out.insert(out.end(), {"--hint", "romio_cb_read=" + cb_read});
  if (!cb_write.empty()) out.insert(out.end(), {"--hint", "romio_cb_write=" + cb_write});
  if (!ds_read.empty()) out.insert(out.end(), {"--hint", "romio_ds_read=" + ds_read});
  if (!ds_write.empty()) out.insert(out.end(), {"--hint", "romio_ds_write=" + ds_write});
  if (ind_rd_buffer_size > 0)
    out.insert(out.end(), {"--hint", fmt::format("ind_rd_buffer_size={}", ind_rd_buffer_size)});
  if (ind_wr_buffer_size > 0)
    out.insert(out.end(), {"--hint", fmt::format("ind_wr_buffer_size={}", ind_wr_buffer_size)});
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
