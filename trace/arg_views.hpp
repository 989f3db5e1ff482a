// Typed views of an event's argument slots. Which slots a family's records
// fill, and what they mean, is declared once by the @view and @uses lines of
// trace/api/*.list; trace/api/gen_kinds.py generates one view per @view
// (trace/arg_views.inc). Readers take the view of the record's family
// (file_args(ev).offset(), mpi_args(ev).peer()) instead of a raw
// args[arg::x]: taking a view for a kind whose family did not fill those
// slots throws, and try_*_args says so without throwing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

#include "trace/event.hpp"
#include "trace/inter_request.hpp"
#include "trace/kind.hpp"

namespace mpior::trace {

// A view taken for a kind whose family fills other slots: a reader's bug.
[[noreturn]] void view_misuse(std::string_view view, Kind k);

#include "trace/arg_views.inc"

// The slots of a kind's records that hold an index in the rank's file table:
// file for the file families' kinds, file2 too for those naming two files
// (kind facts names_file and two_files). A view's blocks (mpior_block, an
// internal record) belong to MPI-IO and name its file too.
inline std::span<const int> file_slots(Kind k) {
  static constexpr int kSlots[] = {arg::file, arg::file2};
  if (!has_fact(k, fact::names_file) && !is_mpiio(k)) return {};
  return {kSlots, has_fact(k, fact::two_files) ? 2u : 1u};
}

}  // namespace mpior::trace
