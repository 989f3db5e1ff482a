#include "trace/builder.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "trace/fold.hpp"
#include "trace/journal_format.hpp"

namespace mpior::trace {

struct StreamBuilder::Impl {
  explicit Impl(const BuilderOptions& o) : opt(o), folder(std::make_unique<fold::Folder>(o)) {}

  BuilderOptions opt;
  std::array<int64_t, 257> ref{};  // per depth (and one past the deepest): gap reference
  std::unique_ptr<fold::Folder> folder;

  // The gap before an event starting at `start` (ns), measured from the
  // last event at its depth; it becomes the reference of the next.
  int64_t gap_of(size_t depth, int64_t start, int64_t end, int64_t tracer) {
    int64_t gap = start - ref[depth];
    if (depth == 0 && tracer > 0) gap = std::max<int64_t>(0, gap - tracer);  // the program's time only
    ref[depth] = end;
    ref[depth + 1] = start;
    return gap;
  }
  void follow(const RawEvent& ev) {
    ref[ev.depth] = ev.end;
    ref[size_t(ev.depth) + 1] = ev.start;
  }

  // A thread calls from few call sites, mostly the one it called from last:
  // the signature of the last (call site, kind, depth, flags) is kept.
  uint64_t last_callsite = 0, last_key = ~uint64_t(0), last_sig = 0;
  uint64_t signature(const RawEvent& ev) {
    const uint64_t key = fold::event_key(ev);
    if (ev.callsite != last_callsite || key != last_key) {
      last_callsite = ev.callsite;
      last_key = key;
      last_sig = fold::event_signature(ev);
    }
    return last_sig;
  }

  void append(const RawEvent& ev) {
    folder->add(ev, gap_of(ev.depth, ev.start, ev.end, ev.tracer), ev.end - ev.start, signature(ev));
  }

  // append() of up to kBatch events: their times in ns, gaps, durations
  // and signatures first (the builder's own state only), then the folder
  // takes them at once.
  static constexpr size_t kBatch = 64;
  template <size_t Stride>
  void append_batch(EventRun<Stride> ev, size_t n, const TickScale& scale, size_t* done) {
    int64_t gap[kBatch], dur[kBatch];
    uint64_t sig[kBatch];
    if (scale.tsc)  // the clock's kind is the batch's: decided once, not per time converted
      batch_times<true>(ev, n, scale, gap, dur, sig);
    else
      batch_times<false>(ev, n, scale, gap, dur, sig);
    folder->add_batch(ev, gap, dur, sig, n, done);
  }
  template <bool Tsc, size_t Stride>
  void batch_times(EventRun<Stride> ev, size_t n, const TickScale& scale, int64_t* gap, int64_t* dur, uint64_t* sig) {
    for (size_t i = 0; i < n; ++i) {
      const RawEvent& e = ev[i];
      const int64_t start = scale.to_ns_as<Tsc>(e.start), end = scale.to_ns_as<Tsc>(e.end);
      gap[i] = gap_of(e.depth, start, end, scale.duration_ns_as<Tsc>(e.tracer));
      dur[i] = end - start;
      sig[i] = signature(e);
    }
  }
};

StreamBuilder::StreamBuilder(BuilderOptions opt) : impl_(std::make_unique<Impl>(opt)) {}
StreamBuilder::~StreamBuilder() = default;
StreamBuilder::StreamBuilder(StreamBuilder&&) noexcept = default;
StreamBuilder& StreamBuilder::operator=(StreamBuilder&&) noexcept = default;

void StreamBuilder::append(const RawEvent& ev) {
  impl_->append(ev);
  ++events_;
  ++folded_;
}

template <size_t Stride>
void StreamBuilder::append_ticks(EventRun<Stride> evs, size_t n, const TickScale& scale) {
  size_t done = 0, part = 0;
  try {
    for (; done < n; done += part, part = 0)
      impl_->append_batch(evs + done, std::min(Impl::kBatch, n - done), scale, &part);
  } catch (...) {  // out of memory: the events folded so far count
    events_ += done + part;
    folded_ += done + part;
    throw;
  }
  events_ += done;
  folded_ += done;
}
template void StreamBuilder::append_ticks(EventArray, size_t, const TickScale&);
template void StreamBuilder::append_ticks(EventRun<sizeof(JournalRecord)>, size_t, const TickScale&);

// Times already in ns: a scale that keeps them.
void StreamBuilder::append_all(std::span<const RawEvent> evs) {
  append_ticks(EventArray{evs.data()}, evs.size(), TickScale{});
}

void StreamBuilder::continue_after(const RawEvent& ev) { impl_->follow(ev); }

FoldedPart StreamBuilder::spare() const {
  FoldedPart p;
  p.folder_ = std::make_unique<fold::Folder>(impl_->opt);
  p.lossless_ = impl_->opt.lossless;
  return p;
}

FoldedPart StreamBuilder::swap(FoldedPart&& spare) noexcept {
  FoldedPart out;
  out.folder_ = std::move(impl_->folder);
  out.lossless_ = impl_->opt.lossless;
  out.events_ = folded_;
  impl_->folder = std::move(spare.folder_);
  folded_ = 0;
  return out;
}

FoldedPart::FoldedPart() = default;
FoldedPart::~FoldedPart() = default;
FoldedPart::FoldedPart(FoldedPart&&) noexcept = default;
FoldedPart& FoldedPart::operator=(FoldedPart&&) noexcept = default;

Stream FoldedPart::finish(int32_t rank, uint32_t thread) {
  Stream s;
  s.lossless = lossless_;
  if (folder_) folder_->finish(s);
  folder_.reset();
  s.thread = thread;
  SeqItem r{rank, 0, 0};
  s.ranks = s.values.add({&r, 1});
  return s;
}

Stream StreamBuilder::snapshot(int32_t rank, uint32_t thread) const {
  Stream s;
  s.lossless = impl_->opt.lossless;
  impl_->folder->snapshot(s);
  s.thread = thread;
  SeqItem r{rank, 0, 0};  // stored even for rank 0: a rank list needs the value
  s.ranks = s.values.add({&r, 1});
  return s;
}

size_t StreamBuilder::memory_bytes() const { return sizeof(Impl) + impl_->folder->memory_bytes(); }

}  // namespace mpior::trace
