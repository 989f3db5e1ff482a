// The untimed phase before replay: the target directory, every plan path
// mapped and checked to stay inside it, stale outputs removed, inputs
// created at their traced size, stdio sinks, the I/O buffers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "replayer/sandbox.hpp"
#include "trace/model.hpp"

namespace mpior::replay {

// A buffer replay threads read into and write from. Reserved with
// MAP_NORESERVE: only pages a read touches become resident.
class IoBuffer {
 public:
  explicit IoBuffer(size_t bytes);
  ~IoBuffer();
  IoBuffer(const IoBuffer&) = delete;
  IoBuffer& operator=(const IoBuffer&) = delete;
  char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
};

// Each rank copies its writes from memory of its own, as the application's
// processes do: ranks sharing one buffer copy from the cache of a core they
// share, cheaper than the copies of distinct memory the program's ranks make
// (on a tmpfs a write is that copy). Up to this many bytes of buffers in all
// (each filled, so resident); a plan needing more shares one buffer.
inline constexpr size_t kOwnBuffersBytes = size_t(256) << 20;

// Largest byte count any read or write of the plan asks for.
int64_t largest_io_count(const trace::Plan& plan);

struct SetupOptions {
  std::string fs;           // --fs
  bool stdio_null = false;  // stdout/stderr writes go to /dev/null
  Sandbox::Resolver resolver = Sandbox::Resolver::automatic;
};

struct Target {
  std::unique_ptr<Sandbox> sandbox;
  std::vector<std::string> mapped;           // global file id -> path below the root
  std::vector<bool> relative;                // the traced path is relative: each rank maps it below its own cwd
  std::array<int, 3> stdio_fds{-1, -1, -1};  // what fds 0, 1, 2 are replayed on; shared by all threads
  std::unique_ptr<IoBuffer> buffer;          // setup's, and every rank's past kOwnBuffersBytes
  std::vector<std::unique_ptr<IoBuffer>> rank_buffers;  // one per rank, where they fit in kOwnBuffersBytes
  std::vector<std::string> warnings;
  // The buffer a rank's calls move their data through: its own where there is one.
  const IoBuffer& buffer_of(int32_t rank) const {
    return size_t(rank) < rank_buffers.size() ? *rank_buffers[size_t(rank)] : *buffer;
  }  // setup problems that do not stop the replay
  ~Target();
};

// Throws ToolError naming the file or directory when the target cannot
// hold the replay (unusable --fs, a path leaving it, a file that cannot be made).
std::unique_ptr<Target> prepare_target(const trace::Plan& plan, const SetupOptions& opt);

// Raises the soft open-file limit to the hard limit (thousands of threads each
// holding files).
void raise_file_limit();

}  // namespace mpior::replay
