#include "replayer/mpi_hints.hpp"

#include <fmt/format.h>

namespace mpior::replay {

FileHints::FileHints(const Hints& hints) : hints_(hints) {
  if (hints_.empty()) return;
  MPI_Info_create(&info_);
  for (const auto& [key, value] : hints_) MPI_Info_set(info_, key.c_str(), value.c_str());
}

FileHints::~FileHints() {
  if (info_ != MPI_INFO_NULL) MPI_Info_free(&info_);
}

void FileHints::opened(MPI_File fh) {
  if (hints_.empty()) return;
  std::lock_guard lock(mu_);
  if (read_) return;
  MPI_Info got = MPI_INFO_NULL;
  if (MPI_File_get_info(fh, &got) != MPI_SUCCESS) return;
  read_ = true;
  for (const auto& [key, value] : hints_) {
    char buf[MPI_MAX_INFO_VAL + 1] = {};
    int flag = 0;
    MPI_Info_get(got, key.c_str(), MPI_MAX_INFO_VAL, buf, &flag);
    in_force_.push_back(flag ? std::string(buf) : std::string());
  }
  MPI_Info_free(&got);
}

std::string FileHints::describe(std::vector<std::string>* ignored) const {
  std::lock_guard lock(mu_);
  std::string out;
  for (size_t i = 0; i < hints_.size(); ++i) {
    const auto& [key, value] = hints_[i];
    if (!out.empty()) out += ", ";
    out += key + "=" + value;
    if (!read_) continue;
    const std::string& now = in_force_[i];
    out += fmt::format(" (in force: {})", now.empty() ? "not listed" : now);
    if (now != value && ignored)
      ignored->push_back(now.empty()
                             ? fmt::format("MPI-IO hint {}={} is not in force: MPI does not list it", key, value)
                             : fmt::format("MPI-IO hint {}={}: MPI uses {}", key, value, now));
  }
  return out;
}

}  // namespace mpior::replay
