// One replay thread's file system work: the traced calls reissued on files
// below the target directory, through tables from traced handles (fd numbers,
// stdio stream ids) to the real descriptors and FILE*s the replay opened.
#pragma once

#include <dirent.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>

#include "replayer/aio_replay.hpp"
#include "replayer/final_sizes.hpp"
#include "replayer/kind_table.hpp"
#include "replayer/replay_report.hpp"
#include "replayer/setup.hpp"
#include "replayer/sync.hpp"
#include "trace/arg_views.hpp"
#include "trace/event.hpp"
#include "trace/kind.hpp"
#include "trace/model.hpp"

namespace mpior::replay {

struct IoOutcome {
  bool replayed = true;  // false: the call had failed when traced and was not reissued
  int64_t bytes = 0;     // bytes read or written by the replayed call
  int64_t call_ns = 0;   // the time inside the real calls alone (0: not measured)
  int64_t end_ns = 0;    // with call_ns: the clock when they returned (the replay reads it once)
};

class IoReplay {
 public:
  // `who` names the thread in error messages ("rank 3 thread 0").
  IoReplay(const Target& target, const trace::Plan& plan, int32_t rank, ErrorLog& errors, Progress& progress,
           std::string who);
  ~IoReplay();
  // Whether replay(ev) is a read or write that times its real calls alone
  // (IoOutcome::call_ns, end_ns); replay() times every other call around it.
  static bool times_itself(const trace::Event& ev);
  IoReplay(const IoReplay&) = delete;
  IoReplay& operator=(const IoReplay&) = delete;
  const IoBuffer& buffer() const { return buffer_; }  // the rank's (Target::buffer_of)

  IoOutcome replay(const trace::Event& ev);
  // A nested record that matters to the replay: AIO submits listed by a
  // replayed lio_listio (under_list) and AIO completions wherever they sit.
  IoOutcome nested(const trace::Event& ev, bool under_list);
  // Closes every stream (flushing it, as exit does) and descriptor still open.
  void close_all();

  // Under MPI_File_close every rank that used the shared file pointer deletes
  // ROMIO's hidden pointer file: which deletion finds it is a race, not an error.
  void set_racing_unlinks(bool on) { racing_unlinks_ = on; }

  // What the replayed calls did to files' sizes (final_sizes.hpp).
  SizeLog& sizes() { return sizes_; }

  // The path below the target of a rank-local file id; nullptr when none.
  const std::string* mapped(int64_t local);
  int32_t global_file(int64_t local) const;
  // Records a failed replayed call; aborts the replay when the target file
  // system cannot take more (full, read-only, over quota).
  void fail(const trace::Event& ev, int err, const std::string& detail = {});
  // While on, a failure that a name not (or still) there explains (ENOENT,
  // EEXIST, ENOTEMPTY, ENOTDIR) is held instead of recorded: another thread
  // of the rank may yet make or remove the name, and the call be retried.
  void hold_name_failures(bool on) {
    holding_ = on;
    held_.clear();
  }
  bool failure_held() const { return !held_.empty(); }
  // Records the held failure after all.
  void record_held() {
    if (!held_.empty()) errors_.add(std::move(held_));
    held_.clear();
  }

 private:
  bool holding_ = false;
  std::string held_;
  enum class Owner : uint8_t { self, shared, stream };
  struct Fd {
    int fd;
    Owner owner;
  };
  struct Stream {
    FILE* fp;
    int fd;
  };
  struct Mapping {
    char* addr;
    size_t len;
    int64_t offset;  // file offset of addr
    int fd;          // a copy of the mapped fd: the file's size bounds what is touched
  };
  using Maps = std::unordered_map<int64_t, Mapping>;

  // Each kind's call (io_replay.cpp registers them by op class and facts).
  using Call = IoOutcome (IoReplay::*)(const trace::Event&);
  static constexpr KindTable<Call> calls();
  // How a call finds what it works on, F doing the work: a member, or one of
  // io_replay_ops.hpp's system calls. A call on something the trace opened
  // (descriptor, stream, directory, mapping, request) that failed when
  // traced has nothing to reissue; an open or a lookup by path that failed
  // still cost the file system a lookup, and is reissued.
  template <auto F>
  IoOutcome on_fd(const trace::Event& ev);
  template <auto F>
  IoOutcome on_stream(const trace::Event& ev);
  template <auto F>
  IoOutcome on_path(const trace::Event& ev);
  template <Call F>
  IoOutcome unless_failed(const trace::Event& ev);
  template <auto F, class H>
  IoOutcome run(const trace::Event& ev, H target);

  // Descriptors and paths (io_replay_files.cpp).
  IoOutcome open_file(const trace::Event& ev);
  IoOutcome close_fd(const trace::Event& ev);
  IoOutcome transfer_fd(const trace::Event& ev, int fd) { return transfer(ev, fd, nullptr); }
  IoOutcome transfer(const trace::Event& ev, int fd, FILE* fp);
  IoOutcome dup_fd(const trace::Event& ev, int fd);
  int unlink_path(const trace::Event& ev, const std::string& path);
  int rename_path(const trace::Event& ev, const std::string& path);
  int link_path(const trace::Event& ev, const std::string& path);
  // Streams (io_replay_streams.cpp).
  IoOutcome open_stream(const trace::Event& ev);
  IoOutcome fdopen_stream(const trace::Event& ev);
  IoOutcome stream_on(const trace::Event& ev, int fd, Fd* taken);
  IoOutcome close_stream(const trace::Event& ev);
  IoOutcome transfer_stream(const trace::Event& ev, FILE* fp) { return transfer(ev, -1, fp); }
  IoOutcome flush(const trace::Event& ev);
  IoOutcome flush_all(const trace::Event& ev);
  // AIO, copies, directories, mappings (io_replay_calls.cpp).
  IoOutcome aio_submit(const trace::Event& ev);
  // lio_listio, aio_error, aio_suspend...: their nested records do the work.
  IoOutcome by_records(const trace::Event&) { return {}; }
  // exec, _exit: nothing to reissue (a new image is a thread of its own).
  IoOutcome nothing_to_reissue(const trace::Event&) { return {}; }
  // MPI calls and the tracer's records: what the file system saw of them
  // is nested under them.
  IoOutcome not_file_work(const trace::Event&) { return {false, 0}; }
  IoOutcome copy(const trace::Event& ev);
  IoOutcome map_new(const trace::Event& ev);
  IoOutcome map_sync(const trace::Event& ev);
  IoOutcome map_move(const trace::Event& ev);
  IoOutcome map_end(const trace::Event& ev);
  template <class F>
  IoOutcome written_back(const trace::Event& ev, F&& then);
  int open_dir(const trace::Event& ev, const std::string& path);
  IoOutcome fdopen_dir(const trace::Event& ev);
  IoOutcome read_dir(const trace::Event& ev);
  IoOutcome close_dir(const trace::Event& ev);
  DIR* dir_for(const trace::Event& ev);

  int fd_for(const trace::Event& ev) { return fd_for(io_args(ev).handle(), io_args(ev).file()); }
  int fd_for(int64_t handle, int64_t file);
  FILE* stream_for(const trace::Event& ev);
  void set_fd(int64_t handle, int fd, Owner owner);
  std::string traced_path(int64_t local) const;

  const Target& target_;
  const IoBuffer& buffer_;  // target_.buffer_of(the rank)
  const trace::Plan& plan_;
  const trace::PlanRank& rank_;
  ErrorLog& errors_;
  Progress& progress_;
  std::string who_;
  std::unordered_map<int64_t, Fd> fds_;
  std::unordered_map<int64_t, Stream> streams_;
  std::unordered_map<int32_t, std::string> relative_paths_;  // relative traced paths, below this rank's cwd
  bool racing_unlinks_ = false;
  AioReplay aio_;
  std::unordered_map<int64_t, DIR*> dirs_;  // directory streams by traced fd
  Maps maps_;                               // by traced mapping id
  SizeLog sizes_;
};

}  // namespace mpior::replay
