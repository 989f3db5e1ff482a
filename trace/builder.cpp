#include "trace/builder.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "trace/fold.hpp"

namespace mpior::trace {

struct StreamBuilder::Impl {
  explicit Impl(const BuilderOptions& o) : opt(o), folder(std::make_unique<fold::Folder>(o)) {}

  BuilderOptions opt;
  std::array<int64_t, 257> ref{};  // per depth (and one past the deepest): gap reference
  std::unique_ptr<fold::Folder> folder;

  int64_t gap_of(const RawEvent& ev) {
    size_t d = ev.depth;
    int64_t gap = ev.start - ref[d];
    if (d == 0 && ev.tracer > 0) gap = std::max<int64_t>(0, gap - ev.tracer);  // the program's time only
    follow(ev);
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

  void append(const RawEvent& ev) { folder->add(ev, gap_of(ev), ev.end - ev.start, signature(ev)); }

  // append() of up to kBatch events: their gaps, durations and signatures
  // first (the builder's own state only), then the folder takes them at once.
  static constexpr size_t kBatch = 64;
  void append_batch(const RawEvent* ev, size_t n, size_t* done) {
    int64_t gap[kBatch], dur[kBatch];
    uint64_t sig[kBatch];
    for (size_t i = 0; i < n; ++i) {
      gap[i] = gap_of(ev[i]);
      dur[i] = ev[i].end - ev[i].start;
      sig[i] = signature(ev[i]);
    }
    folder->add_batch(ev, gap, dur, sig, n, done);
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

void StreamBuilder::append_all(std::span<const RawEvent> evs) {
  size_t done = 0, part = 0;
  try {
    for (; done < evs.size(); done += part, part = 0)
      impl_->append_batch(evs.data() + done, std::min(Impl::kBatch, evs.size() - done), &part);
  } catch (...) {  // out of memory: the events folded so far count
    events_ += done + part;
    folded_ += done + part;
    throw;
  }
  events_ += done;
  folded_ += done;
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
