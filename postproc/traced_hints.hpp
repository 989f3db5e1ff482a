// The MPI-IO hints a job was traced with (trace::JobInfo::mpiio_hints) as
// the defaults of mpior-post's collective I/O what-ifs: the hints that stand
// for the program's choice, agreed by every file and every input.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trace/model.hpp"

namespace mpior::postproc {

struct TracedHint {
  std::string key, value;
};

struct TracedHints {
  std::vector<TracedHint> taken;       // in trace::kMpiioHintKeys's order
  std::vector<std::string> differing;  // keys taken with different values by two files or inputs
  std::string fcoll;                   // OMPIO's forced component, the same in every input; "" none
};

// A hint is taken when the program gave it, or (ROMIO's hints whose
// default is a constant: buffer sizes, romio_cb_*, romio_ds_*,
// cb_config_list) when the library reported another value than ROMIO's
// default (a ROMIO_HINTS file). cb_nodes only when given: unless given, ROMIO
// derives it from the run's hosts, which an extrapolated plan changes. striping_factor and the
// romio_lustre_* hints only from ROMIO's Lustre driver (which reports
// romio_lustre_co_ratio): off Lustre they would turn the Lustre model on.
TracedHints traced_hints(const std::vector<const trace::JobInfo*>& jobs);

// mpior-post's option for a hint ("--cb-buffer-size").
std::string hint_option(std::string_view key);

// A hint an extrapolated plan was dealt with, as a note of the plan
// (what "hint KEY", model its value, name where it came from: "traced", or
// "--cb-nodes given, traced 4"); the summary lists them apart from the
// quantities modelled.
trace::ExtrapNote hint_note(const std::string& key, const std::string& value, const std::string& source);
bool is_hint_note(const trace::ExtrapNote& n);

}  // namespace mpior::postproc
