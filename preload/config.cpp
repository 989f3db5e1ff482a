#include "preload/config.hpp"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "preload/log.hpp"

extern "C" {
extern mpior::preload::config::OptionBase* const __start_mpior_options[] __attribute__((weak));
extern mpior::preload::config::OptionBase* const __stop_mpior_options[] __attribute__((weak));
}

namespace mpior::preload::config {
namespace {

// Storage for string values: options hold string_views into it.
std::vector<std::string>& string_store() {
  static auto* store = new std::vector<std::string>();
  return *store;
}

bool parse_bool(std::string_view t, bool* out) {
  for (const char* yes : {"1", "yes", "true", "on"})
    if (t == yes) return *out = true, true;
  for (const char* no : {"0", "no", "false", "off"})
    if (t == no) return *out = false, true;
  return false;
}

bool in_choices(const char* choices, std::string_view v) {
  if (!choices) return true;
  std::string_view all(choices);
  size_t start = 0;
  while (start <= all.size()) {
    size_t bar = all.find('|', start);
    if (all.substr(start, bar == std::string_view::npos ? all.npos : bar - start) == v) return true;
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  return false;
}

std::vector<OptionBase*> registered() {
  std::vector<OptionBase*> out;
  if (__start_mpior_options)
    for (auto* p = __start_mpior_options; p != __stop_mpior_options; ++p) out.push_back(*p);
  return out;
}

}  // namespace

bool parse_value(std::string_view t, bool* out) { return parse_bool(t, out); }

bool parse_value(std::string_view t, int64_t* out) {
  std::string s(t);
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 0);
  if (s.empty() || *end || errno) return false;
  *out = v;
  return true;
}

bool parse_value(std::string_view t, std::string_view* out, const char* choices) {
  if (!in_choices(choices, t)) return false;
  string_store().emplace_back(t);
  *out = string_store().back();
  return true;
}

std::string print_value(bool v) { return v ? "1" : "0"; }
std::string print_value(int64_t v) { return std::to_string(v); }
std::string print_value(std::string_view v) { return std::string(v); }

void load() {
  static bool loaded = false;
  if (loaded) return;
  loaded = true;
  string_store().reserve(64);  // views into the store must stay valid
  for (OptionBase* o : registered()) {
    const char* v = std::getenv(o->name());
    if (v && !o->parse(v))
      log_warn("ignoring {}={}: expected {} (keeping {})", o->name(), v, o->type(), o->value_text());
  }
  const char* dump = std::getenv("MPIOR_DUMP_CONFIG");
  if (dump && *dump && std::strcmp(dump, "0") != 0) log_raw(describe_all());
}

std::string describe_all() {
  std::string out = "mpior configuration (MPIOR_* environment variables):\n";
  for (OptionBase* o : registered()) {
    out += "  " + std::string(o->name()) + "=" + o->value_text() + "  [" + o->type() + ", default " +
           o->default_text() + "]\n      " + o->help() + "\n";
  }
  out += "  MPIOR_DUMP_CONFIG=1  prints this table at start\n";
  return out;
}

}  // namespace mpior::preload::config
