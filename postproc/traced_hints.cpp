#include "postproc/traced_hints.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "trace/mpiio_hints.hpp"

namespace mpior::postproc {

namespace {

enum class Taken { given, given_or_changed, lustre };
struct Rule {
  std::string_view key;
  Taken when;
  std::string_view romio_default;  // with given_or_changed
};
constexpr Rule kRules[] = {
    {"cb_buffer_size", Taken::given_or_changed, "16777216"},
    {"cb_nodes", Taken::given, ""},
    {"cb_config_list", Taken::given_or_changed, "*:1"},
    {"romio_cb_read", Taken::given_or_changed, "automatic"},
    {"romio_cb_write", Taken::given_or_changed, "automatic"},
    {"romio_ds_read", Taken::given_or_changed, "automatic"},
    {"romio_ds_write", Taken::given_or_changed, "automatic"},
    {"ind_rd_buffer_size", Taken::given_or_changed, "4194304"},
    {"ind_wr_buffer_size", Taken::given_or_changed, "524288"},
    {"striping_unit", Taken::given, ""},
    {"striping_factor", Taken::lustre, ""},
    {"romio_min_fdomain_size", Taken::given, ""},
    {"romio_lustre_co_ratio", Taken::lustre, ""},
    {"romio_lustre_coll_threshold", Taken::lustre, ""},
    {"romio_lustre_ds_in_coll", Taken::lustre, ""},
};
static_assert(std::size(kRules) == trace::kMpiioHintKeys.size());

bool takes(const Rule& r, const trace::MpiioHint& h, bool lustre) {
  switch (r.when) {
    case Taken::given:
      return h.given;
    case Taken::given_or_changed:
      return h.given || h.value != r.romio_default;
    case Taken::lustre:
      return lustre;
  }
  return false;
}

}  // namespace

TracedHints traced_hints(const std::vector<const trace::JobInfo*>& jobs) {
  TracedHints out;
  std::map<std::string_view, std::optional<std::string>> seen;  // key -> value, nullopt once two differ
  for (const trace::JobInfo* j : jobs)
    for (const trace::MpiioHintSet& s : j->mpiio_hints) {
      // The Lustre driver reports its own hints; the generic one never does.
      bool lustre = trace::find_hint(s, "romio_lustre_co_ratio") != nullptr;
      for (const Rule& r : kRules) {
        const trace::MpiioHint* h = trace::find_hint(s, r.key);
        if (!h || !takes(r, *h, lustre)) continue;
        auto [it, fresh] = seen.try_emplace(r.key, h->value);
        if (!fresh && it->second && *it->second != h->value) it->second.reset();
      }
    }
  for (std::string_view key : trace::kMpiioHintKeys) {
    auto it = seen.find(key);
    if (it == seen.end()) continue;
    if (it->second)
      out.taken.push_back({std::string(key), *it->second});
    else
      out.differing.emplace_back(key);
  }
  bool same_fcoll = !jobs.empty() && std::all_of(jobs.begin(), jobs.end(), [&](const trace::JobInfo* j) {
    return j->ompio_fcoll == jobs.front()->ompio_fcoll;
  });
  if (same_fcoll) out.fcoll = jobs.front()->ompio_fcoll;
  return out;
}

std::string hint_option(std::string_view key) {
  std::string flag(key);
  std::replace(flag.begin(), flag.end(), '_', '-');
  return "--" + flag;
}

trace::ExtrapNote hint_note(const std::string& key, const std::string& value, const std::string& source) {
  return {-1, -1, -1, "hint " + key, value, source};
}

bool is_hint_note(const trace::ExtrapNote& n) { return n.stream == -1 && n.what.starts_with("hint "); }

}  // namespace mpior::postproc
