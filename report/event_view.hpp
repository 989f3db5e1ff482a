// What a timeline or report says about one event, for traced runs (trace
// sets) and replays (plans) alike: its category, and its arguments named —
// the file's path, offset and bytes of an I/O call; the communicator, peer,
// tag and bytes of an MPI call.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trace/event.hpp"

namespace mpior::report {

// How one rank names things: its local file and communicator ids.
class RankNames {
 public:
  virtual ~RankNames() = default;
  // The path of a local file id; empty when there is none.
  virtual std::string path(int64_t local_file) const = 0;
  // Global communicator id of a local one, -1 unknown.
  virtual int64_t comm(int64_t local_comm) const = 0;
  // World rank of a rank in a global communicator, -1 unknown.
  virtual int64_t world(int64_t global_comm, int64_t comm_rank) const = 0;
};

// The same for tables shaped like the plan's: local -> global file and
// communicator ids, global paths and members.
class TableNames : public RankNames {
 public:
  TableNames(const std::vector<int32_t>& files, const std::vector<std::string>& paths,
             const std::vector<int32_t>& comms, const std::vector<const std::vector<int32_t>*>& members)
      : files_(files), paths_(paths), comms_(comms), members_(members) {}
  std::string path(int64_t local_file) const override;
  int64_t comm(int64_t local_comm) const override;
  int64_t world(int64_t global_comm, int64_t comm_rank) const override;

 private:
  const std::vector<int32_t>& files_;
  const std::vector<std::string>& paths_;
  const std::vector<int32_t>& comms_;
  const std::vector<const std::vector<int32_t>*>& members_;
};

// "io", "mpi" or "other"; tracer records (completions, members) are "record".
const char* category(const trace::Event& ev);
bool is_record(const trace::Event& ev);
nlohmann::json event_args(const trace::Event& ev, const RankNames& names);

}  // namespace mpior::report
