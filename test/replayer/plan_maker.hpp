// Hand-built plans for the replayer's tests: streams from RawEvents through
// the real StreamBuilder, the plan tables, and temporary directories.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "trace/builder.hpp"
#include "trace/format.hpp"
#include "trace/model.hpp"

namespace mpior::replay::testing {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "mpior-replay-test-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

// Appends calls in order with their gaps and durations (ns); one per thread.
class StreamMaker {
 public:
  explicit StreamMaker(bool lossless = true) : b_(trace::BuilderOptions{lossless}) {}

  // A depth-0 call `gap` after the previous one ended, lasting `dur`.
  StreamMaker& call(trace::Kind k, std::array<int64_t, trace::kNumArgs> args, int64_t ret = 0, int64_t gap = 0,
                    int64_t dur = 0, uint8_t flags = 0) {
    trace::RawEvent ev;
    ev.kind = k;
    ev.flags = flags;
    ev.args = args;
    ev.ret = ret;
    ev.start = now_ + gap;
    ev.end = ev.start + dur;
    last_start_ = ev.start;
    now_ = ev.end;
    b_.append(ev);
    return *this;
  }
  // A call nested in the previous depth-0 call (a completion record, a POSIX
  // call under MPI-IO).
  // `gap` after the call's start, lasting `dur`.
  StreamMaker& nested(trace::Kind k, std::array<int64_t, trace::kNumArgs> args, int64_t ret = 0, int64_t gap = 0,
                      int64_t dur = 0) {
    trace::RawEvent ev;
    ev.kind = k;
    ev.depth = 1;
    ev.args = args;
    ev.ret = ret;
    ev.start = last_start_ + gap;
    ev.end = ev.start + dur;
    b_.append(ev);
    return *this;
  }
  // The stream for one rank, or for ranks [first, first + count) when merged.
  trace::Stream stream(int32_t rank, uint32_t thread = 0, int32_t count = 1) const {
    trace::Stream s = b_.snapshot(rank, thread);
    if (count > 1) {
      std::vector<trace::SeqItem> items = {{1, uint32_t(count), 1}, {rank, 0, 0}};
      s.ranks = s.values.add(items);
    }
    return s;
  }
  int64_t now() const { return now_; }

 private:
  trace::StreamBuilder b_;
  int64_t now_ = 0;
  int64_t last_start_ = 0;
};

// A plan of `ranks` ranks with MPI_COMM_WORLD (global comm 0) and the three
// standard streams (global files 0, 1, 2); files added later get the same
// local id on every rank unless a test rewires PlanRank::files.
class PlanMaker {
 public:
  explicit PlanMaker(int32_t ranks, int64_t traced_ns = 0, const std::string& cwd = "/home/user") {
    plan.job.size = ranks;
    plan.files = {{"<stdin>", false, false, 0}, {"<stdout>", false, false, 0}, {"<stderr>", false, false, 0}};
    trace::PlanComm world;
    for (int32_t r = 0; r < ranks; ++r) world.members.push_back(r);
    plan.comms.push_back(world);
    for (int32_t r = 0; r < ranks; ++r) plan.ranks.push_back({"host", cwd, traced_ns, {0, 1, 2}, {0}});
  }
  int64_t file(const std::string& path, bool created, int64_t initial_size = 0, bool directory = false) {
    plan.files.push_back({path, created, /*existed=*/!created, directory, initial_size});
    int32_t g = int32_t(plan.files.size() - 1);
    for (auto& r : plan.ranks) r.files.push_back(g);
    return int64_t(plan.ranks[0].files.size() - 1);
  }
  // A communicator of the given world ranks; returns the local id every member uses.
  int64_t comm(const std::vector<int32_t>& members) {
    plan.comms.push_back({members});
    int32_t g = int32_t(plan.comms.size() - 1);
    for (auto& r : plan.ranks) r.comms.push_back(g);
    return int64_t(plan.ranks[0].comms.size() - 1);
  }
  void add(trace::Stream s) { plan.streams.push_back(std::move(s)); }
  std::string write(const std::string& dir) const {
    fs::create_directories(dir);
    std::string file = dir + "/" + trace::kPlanFileName;
    trace::write_file_atomic(file, trace::encode(plan));
    return file;
  }

  trace::Plan plan;
};

// Argument arrays by slot name.
inline std::array<int64_t, trace::kNumArgs> io_args(int64_t handle, int64_t file, int64_t offset = -1,
                                                    int64_t count = -1, int64_t flags = 0, int64_t mode = 0,
                                                    int64_t file2 = 0, int64_t handle2 = 0) {
  return {handle, file, offset, count, flags, mode, file2, handle2};
}
inline std::array<int64_t, trace::kNumArgs> mpi_args(int64_t comm, int64_t peer = 0, int64_t tag = 0, int64_t bytes = 0,
                                                     int64_t slot4 = 0, int64_t slot5 = 0, int64_t src = -1,
                                                     int64_t stag = -1) {
  return {comm, peer, tag, bytes, slot4, slot5, src, stag};
}

inline int64_t file_size(const std::string& path) {
  std::error_code ec;
  auto n = fs::file_size(path, ec);
  return ec ? -1 : int64_t(n);
}

}  // namespace mpior::replay::testing
