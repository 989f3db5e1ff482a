// Builds one thread's stream online from the events the tracer records, in
// call order (a parent before the calls made inside it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "trace/event.hpp"
#include "trace/model.hpp"
#include "trace/tsc.hpp"

namespace mpior::trace {
namespace fold {
class Folder;
}

// Records Stride bytes apart from `first`: a RawEvent array, or the events
// inside the crash journal's ring records, which the tracer folds where
// they lie instead of copying each call's record a second time.
template <size_t Stride>
struct EventRun {
  const RawEvent* first = nullptr;
  const RawEvent& operator[](size_t i) const {
    return *reinterpret_cast<const RawEvent*>(reinterpret_cast<const char*>(first) + i * Stride);
  }
  EventRun operator+(size_t i) const { return {&(*this)[i]}; }
};
using EventArray = EventRun<sizeof(RawEvent)>;

struct BuilderOptions {
  bool lossless = false;  // keep every gap and duration, not only statistics
  // Loop search: how many trailing units a repeat may span (ScalaTrace's
  // window), and how many events of an iteration may wait to be matched
  // before the builder gives up matching it against the loop before.
  unsigned fold_window = 32;
  unsigned fold_pending = 256;
};

// Folded events taken out of a builder whole (the tracer's memory cap): the
// builder goes on with an empty folder, this part becomes a stream later,
// away from the recording thread. Loops open at the cut end there.
class FoldedPart {
 public:
  FoldedPart();
  ~FoldedPart();
  FoldedPart(FoldedPart&&) noexcept;
  FoldedPart& operator=(FoldedPart&&) noexcept;
  explicit operator bool() const { return folder_ != nullptr; }
  uint64_t events() const { return events_; }
  // The part's events as one thread's stream of one rank (the last loop
  // folded as if complete, an iteration being matched as it stands).
  Stream finish(int32_t rank, uint32_t thread);

 private:
  friend class StreamBuilder;
  std::unique_ptr<fold::Folder> folder_;
  bool lossless_ = false;
  uint64_t events_ = 0;
};

class StreamBuilder {
 public:
  explicit StreamBuilder(BuilderOptions opt = {});
  ~StreamBuilder();
  StreamBuilder(StreamBuilder&&) noexcept;
  StreamBuilder& operator=(StreamBuilder&&) noexcept;

  // ev.start and ev.end in ns since the process's trace start.
  void append(const RawEvent& ev);
  // The same for each event in order, without a call per event.
  void append_all(std::span<const RawEvent> evs);
  // append_all of records whose times are the tracer's clock readings,
  // converted by `scale` as they are folded (the tracer folds a chunk at a
  // time, where its records lie: Stride is sizeof(RawEvent) or
  // sizeof(JournalRecord)).
  template <size_t Stride>
  void append_ticks(EventRun<Stride> evs, size_t n, const TickScale& scale);
  // Gaps of the events appended next are measured as if ev (times in ns)
  // had been appended before them, without recording it: a stream that
  // continues events folded elsewhere (crash recovery appends a journal's
  // events to the rank file's stream) calls it for each of those in order.
  void continue_after(const RawEvent& ev);
  // The stream so far, for one rank; the builder keeps going afterwards.
  Stream snapshot(int32_t rank, uint32_t thread) const;
  uint64_t events() const { return events_; }
  size_t memory_bytes() const;
  // An empty folder for swap(), made beforehand (allocates).
  FoldedPart spare() const;
  // Exchanges the folded events for the spare's empty folder: no copy, no
  // allocation. Gaps go on from the last event taken.
  FoldedPart swap(FoldedPart&& spare) noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint64_t events_ = 0;
  uint64_t folded_ = 0;  // events in the current folder
};

}  // namespace mpior::trace
