// Hand-built traces for the postproc tests: one RankBuilder per rank appends
// calls the way the tracer would record them, then the set is analysed in
// memory or written to a temporary trace directory.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "postproc/trace_set.hpp"
#include "trace/builder.hpp"
#include "trace/model.hpp"

namespace mpior::test {

inline constexpr uint64_t kJobId = 0x5eed;

class RankBuilder {
 public:
  RankBuilder(int32_t rank, int32_t size, trace::BuilderOptions opt = {});

  // Tables. Entries 0..2 of the file table and comms 0 (world), 1 (self) exist.
  int32_t file(const std::string& path, int64_t flags = -1);
  int32_t comm(trace::CommOrigin origin, int32_t parent, uint64_t parent_seq, std::vector<int32_t> members);

  // Calls go to the current thread, each `dur` ns long after a `gap` ns pause.
  void thread(uint32_t t);
  void at(int64_t start_ns) { now_[cur_] = start_ns; }
  // The call site recorded with the calls that follow (0 to start with).
  void site(uint64_t callsite) { site_ = callsite; }
  void call(trace::Kind kind, std::initializer_list<std::pair<int, int64_t>> args, int64_t ret = 0, int64_t dur = 1000,
            uint8_t depth = 0, uint8_t flags = 0);

  void send(int32_t comm, int64_t dest, int64_t tag, int64_t bytes = 8);
  void isend(int32_t comm, int64_t dest, int64_t tag, int64_t request);
  void recv(int32_t comm, int64_t source, int64_t tag, int64_t actual_source, int64_t actual_tag);
  void irecv(int32_t comm, int64_t source, int64_t tag, int64_t request);
  void sendrecv(int32_t comm, int64_t dest, int64_t tag, int64_t source, int64_t rtag, int64_t actual_source,
                int64_t actual_tag);
  struct Completion {
    int64_t request, req_kind, source, tag;
  };
  // MPI_Waitall followed by one mpior_complete record per completion.
  void wait(std::initializer_list<Completion> done);
  void collective(trace::Kind kind, int32_t comm, int64_t root = 0, int64_t bytes = 8);
  void create(trace::Kind kind, int32_t parent, int32_t new_id);

  void open(int32_t file, int64_t fd, int64_t flags, int64_t ret);
  void pwrite(int32_t file, int64_t fd, int64_t offset, int64_t count, int64_t ret);
  void pread(int32_t file, int64_t fd, int64_t offset, int64_t count, int64_t ret);

  trace::RankTrace& trace() { return trace_; }
  // The trace with one stream per thread used; traced time ends after the last call.
  trace::RankTrace finish();

 private:
  trace::RankTrace trace_;
  std::vector<trace::StreamBuilder> builders_;
  std::vector<int64_t> now_;
  uint32_t cur_ = 0;
  uint64_t site_ = 0;
  std::map<int64_t, uint64_t> collectives_;  // per communicator: collectives made
  trace::BuilderOptions opt_;
};

trace::JobInfo complete_job(int32_t size);
// The ranks as a checked in-memory trace set.
postproc::TraceSet make_set(std::vector<trace::RankTrace> ranks);
// Writes DIR/job.mpior and DIR/rank-NNNNNN.mpior.
void write_trace_dir(const std::string& dir, const trace::JobInfo& job, const std::vector<trace::RankTrace>& ranks);

// A fresh directory under $TMPDIR, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_text(const std::string& path);

}  // namespace mpior::test
