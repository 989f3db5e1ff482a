// The MPI-IO hints the tracer records (trace::MpiioHintSet): the ones
// mpior-post's models of ROMIO and OMPIO read (postproc/romio_*.hpp,
// postproc/ompio_layout.hpp), and no others, so a job record stays small
// whatever a library reports.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "trace/model.hpp"

namespace mpior::trace {

inline constexpr std::array<std::string_view, 15> kMpiioHintKeys = {
    "cb_buffer_size",         "cb_nodes",
    "cb_config_list",         "romio_cb_read",
    "romio_cb_write",         "romio_ds_read",
    "romio_ds_write",         "ind_rd_buffer_size",
    "ind_wr_buffer_size",     "striping_unit",
    "striping_factor",        "romio_min_fdomain_size",
    "romio_lustre_co_ratio",  "romio_lustre_coll_threshold",
    "romio_lustre_ds_in_coll"};

// Hint sets a job record keeps; a program opening more files with other
// hints than that has the rest counted (JobInfo::mpiio_hint_sets_dropped).
inline constexpr size_t kMaxHintSets = 256;

// The hint of that key in a set, or null.
inline const MpiioHint* find_hint(const MpiioHintSet& s, std::string_view key) {
  for (const MpiioHint& h : s.hints)
    if (h.key == key) return &h;
  return nullptr;
}

}  // namespace mpior::trace
