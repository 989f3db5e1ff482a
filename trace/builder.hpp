// Builds one thread's stream online from the events the tracer records, in
// call order (a parent before the calls made inside it).
#pragma once

#include <cstdint>
#include <memory>

#include "event.hpp"
#include "model.hpp"

namespace mpior::trace {

struct BuilderOptions {
  bool lossless = false;  // keep every gap and duration, not only statistics
  // Loop search: how many trailing units a repeat may span (ScalaTrace's
  // window), and how many events of an iteration may wait to be matched
  // before the builder gives up matching it against the loop before.
  unsigned fold_window = 32;
  unsigned fold_pending = 256;
};

class StreamBuilder {
 public:
  explicit StreamBuilder(BuilderOptions opt = {});
  ~StreamBuilder();
  StreamBuilder(StreamBuilder&&) noexcept;
  StreamBuilder& operator=(StreamBuilder&&) noexcept;

  // ev.start and ev.end in ns since the process's trace start.
  void append(const RawEvent& ev);
  // The stream so far, for one rank; the builder keeps going afterwards.
  Stream snapshot(int32_t rank, uint32_t thread) const;
  uint64_t events() const { return events_; }
  size_t memory_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint64_t events_ = 0;
};

}  // namespace mpior::trace
