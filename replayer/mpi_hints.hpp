// --hint KEY=VALUE (--mpi): MPI-IO hints given to every MPI_File_open of the
// replay, so a what-if (ROMIO's cb_nodes, cb_buffer_size, ...) runs on the
// target's real MPI-IO. MPI may ignore or adjust a hint: the values in force
// are read back from the first file opened and reported beside the asked ones.
#pragma once

#include <mpi.h>

#include <mutex>
#include <string>
#include <vector>

#include "replayer/cli.hpp"

namespace mpior::replay {

class FileHints {
 public:
  explicit FileHints(const Hints& hints);
  ~FileHints();
  FileHints(const FileHints&) = delete;
  FileHints& operator=(const FileHints&) = delete;

  // What MPI_File_open takes: MPI_INFO_NULL without hints.
  MPI_Info info() const { return info_; }
  // After an open that succeeded: the first one reads the values in force.
  void opened(MPI_File fh);
  // "cb_nodes=1 (in force: 1)", one per hint, comma separated; empty without
  // hints. `ignored` gets the hints not in force as asked (none read: none).
  std::string describe(std::vector<std::string>* ignored) const;

 private:
  Hints hints_;
  MPI_Info info_ = MPI_INFO_NULL;
  mutable std::mutex mu_;
  bool read_ = false;
  std::vector<std::string> in_force_;  // per hint; "" when MPI does not list it
};

}  // namespace mpior::replay
