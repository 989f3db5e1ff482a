// What a study runs (issue 65): rank counts, targets, what-if settings and
// the points they make, parsed from the command line. Pure: no I/O, so the
// unit tests check every parse and the work list.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "trace/tool_error.hpp"

namespace mpior::study {

struct Target {
  std::string name, dir;
};

// A what-if series: ROMIO hints the plans are made with. The empty setting
// (name "base") is the traced configuration.
struct Setting {
  std::string name = "base";        // file names: "base", "set1", ...
  std::string label = "as traced";  // what the user wrote
  int64_t cb_buffer_size = 0;       // 0: as traced (extrapolation's default buffer)
  // ROMIO's aggregator count, 0: as traced. Plans deal the collective
  // writes to that many ranks (mpior-post --cb-nodes); MPI replays pass it
  // to ROMIO (mpior-replay --hint).
  int cb_nodes = 0;
  // With cb_nodes: ROMIO's striping_unit hint, the dealt file domains end
  // on its multiples (mpior-post --striping-unit); 0: not given.
  int64_t striping_unit = 0;
  // With striping_unit: ROMIO's striping_factor hint, the file declared
  // Lustre (mpior-post --striping-factor); 0: not given.
  int striping_factor = 0;
  // With striping_factor: ROMIO's Lustre driver's hints
  // romio_lustre_co_ratio, romio_lustre_coll_threshold (-1: not given),
  // romio_lustre_ds_in_coll (mpior-post --romio-lustre-*); 0 or empty: not
  // given.
  int lustre_co_ratio = 0;
  int64_t lustre_coll_threshold = -1;
  std::string lustre_ds_in_coll;
  // With cb_nodes, ROMIO's hints of these names (mpior-post
  // --romio-min-fdomain-size, --cb-config-list, --romio-cb-read,
  // --romio-cb-write); 0 or empty: not given (ROMIO's defaults, and
  // cb_config_list *:*, so that N aggregators are N whatever the nodes).
  int64_t min_fdomain_size = 0;
  std::string cb_config_list, cb_read, cb_write;
  // ROMIO's sieving hints of independent non-contiguous calls (mpior-post
  // --romio-ds-read, --romio-ds-write, --ind-rd-buffer-size,
  // --ind-wr-buffer-size); empty or 0: not given (ROMIO's defaults).
  std::string ds_read, ds_write;
  int64_t ind_rd_buffer_size = 0, ind_wr_buffer_size = 0;
  std::string config_list() const { return cb_config_list.empty() ? "*:*" : cb_config_list; }
  // The MPI-IO hints of an MPI replay of this setting: mpior-replay's
  // --hint arguments.
  std::vector<std::string> hint_args() const;
};

// "4,8,16" -> {4, 8, 16}: sorted, unique, each >= 1.
std::vector<int> parse_ranks(const std::string& text);
// "A=/mnt/a" -> {A, /mnt/a}; a name of letters, digits, '-' or '_'.
Target parse_target(const std::string& text);
// "cb_buffer_size=1048576" (K/M/G suffixes allowed) -> what-if setting
// number `index` (named "set<index>"); "cb_nodes=4", and with cb_nodes
// "striping_unit=1M", "romio_min_fdomain_size=SIZE", "cb_config_list=L"
// (its own commas allowed), "romio_cb_read=MODE", "romio_cb_write=MODE";
// "romio_ds_read=MODE", "romio_ds_write=MODE", "ind_rd_buffer_size=SIZE",
// "ind_wr_buffer_size=SIZE"; several, comma separated. Hints the replay cannot apply are refused.
Setting parse_setting(const std::string& text, int index);
// "8192:A=replay.json" -> (8192, A, base, replay.json): an MPI replay's
// result; "8192:A:set1=r.json" for a what-if series.
struct ResultFile {
  int ranks = 0;
  std::string target, setting = "base", path;
  std::string id() const;  // the point it belongs to, as Point::id()
};
ResultFile parse_result(const std::string& text);

// One replay and prediction: a setting at a rank count on a target.
struct Point {
  std::string setting, target;
  int ranks = 0;
  bool traced = false;     // the plan is a traced run's own
  bool mpi = false;        // more ranks than one node's threads: an mpirun line
  std::string id() const;  // "base-n8-A": its file name in points/
};

struct Work {
  std::vector<int> ranks;  // the counts studied, ascending
  std::vector<Point> points;
  std::vector<Point> trust;  // traced counts replayed on the reference
};

// traced: the rank counts of the input traces. A studied count that was
// traced uses its own plan and is marked; every traced count is replayed on
// the reference (the trust check); what-if settings change only extrapolated plans.
Work make_work(const std::vector<int>& ranks, const std::vector<int>& traced, const std::vector<Target>& targets,
               const std::vector<Setting>& settings, int max_threads);

// Plan directory name under plans/ for an extrapolated count ("n8", "n8-set1").
std::string plan_name(const Setting& s, int ranks);

}  // namespace mpior::study
