#include "postproc/pairing.hpp"

#include <algorithm>
#include <deque>
#include <optional>
#include <unordered_map>

#include "trace/arg_views.hpp"
#include "trace/tool_error.hpp"

namespace mpior::postproc {

using trace::OpClass;

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  h ^= h >> 31;
  return h * 0xBF58476D1CE4E5B9ull;
}

struct ChannelHash {
  size_t operator()(const Channel& c) const {
    uint64_t h = mix(uint64_t(uint32_t(c.comm)), uint64_t(uint32_t(c.source)));
    return size_t(mix(mix(h, uint64_t(uint32_t(c.dest))), uint64_t(c.tag)));
  }
};

struct ChannelState {
  uint64_t sent = 0, received = 0;
  int32_t ends = -1;  // index into Impl::ends when pairs are wanted
};

struct ChannelEnds {
  std::vector<MessageEnd> sends, recvs;
};

// A receive whose status is not known yet: an irecv until its completion.
struct PostedRecv {
  int32_t comm = 0;
  int64_t given_source = 0, given_tag = 0;
  uint64_t seq = 0;  // posting number on this rank
};

// Posting order matters only when pairs are wanted: receives wait here until
// every receive posted before them knows its channel.
struct WindowSlot {
  MessageEnd end;
  std::optional<Channel> channel;
  bool known = false;
};

}  // namespace

struct MessageMatcher::Impl {
  const TraceSet* set;
  PairSink sink;
  std::unordered_map<Channel, ChannelState, ChannelHash> channels;
  std::vector<ChannelEnds> ends;
  PairingStats stats;
  // the rank being scanned
  const RankScope* scope = nullptr;
  std::unordered_map<int64_t, PostedRecv> pending;
  std::deque<WindowSlot> window;
  uint64_t window_base = 0, posted = 0;

  ChannelState& state(const Channel& ch) {
    ChannelState& s = channels[ch];
    if (sink && s.ends < 0) {
      s.ends = int32_t(ends.size());
      ends.emplace_back();
    }
    return s;
  }

  MessageEnd end_of(const EventPos& pos) const { return {scope->rank(), scope->thread_of(pos), pos.index}; }

  void add_send(const Channel& ch, const EventPos& pos) {
    ChannelState& s = state(ch);
    ++s.sent;
    if (sink) ends[size_t(s.ends)].sends.push_back(end_of(pos));
  }

  void count_receive(const Channel& ch, const MessageEnd& end) {
    ChannelState& s = state(ch);
    ++s.received;
    if (sink) ends[size_t(s.ends)].recvs.push_back(end);
  }

  uint64_t post(const EventPos& pos) {
    if (sink) window.push_back({end_of(pos), std::nullopt, false});
    return posted++;
  }

  void resolve(uint64_t seq, std::optional<Channel> ch) {
    if (!sink) {
      if (ch) count_receive(*ch, {});
      return;
    }
    window[size_t(seq - window_base)].channel = ch;
    window[size_t(seq - window_base)].known = true;
    while (!window.empty() && window.front().known) {
      if (window.front().channel) count_receive(*window.front().channel, window.front().end);
      window.pop_front();
      ++window_base;
    }
  }

  std::optional<Channel> receive_channel(int32_t comm, int64_t given_source, int64_t given_tag, int64_t status_source,
                                         int64_t status_tag, const trace::Event& ev, const EventPos& pos) const {
    if (given_source == trace::kProcNull || status_source == trace::kProcNull) return std::nullopt;
    int64_t source = status_source >= 0 ? status_source : given_source;
    int64_t tag = status_tag >= 0 ? status_tag : given_tag;
    if (source < 0) throw ToolError(scope->where(ev, pos) + ": receive from any source with no status saying which");
    if (tag < 0) throw ToolError(scope->where(ev, pos) + ": receive with any tag with no status saying which");
    return Channel{comm, scope->world_rank(comm, source, ev, pos, "source"), scope->rank(), tag};
  }

  void send_to(int32_t comm, int64_t dest, int64_t tag, const trace::Event& ev, const EventPos& pos) {
    if (dest == trace::kProcNull) return;
    if (tag < 0) throw ToolError(scope->where(ev, pos) + ": send with tag " + std::to_string(tag));
    add_send({comm, scope->rank(), scope->world_rank(comm, dest, ev, pos, "destination"), tag}, pos);
  }

  void receive_now(int32_t comm, int64_t given_source, int64_t given_tag, const trace::Event& ev, const EventPos& pos) {
    uint64_t seq = post(pos);
    resolve(seq, receive_channel(comm, given_source, given_tag, mpi_args(ev).src(), mpi_args(ev).stag(), ev, pos));
  }

  void complete(const trace::Event& ev, const EventPos& pos) {
    if (mpi_args(ev).req_kind() != trace::kReqRecv) return;
    auto it = pending.find(mpi_args(ev).request());
    if (it == pending.end()) {
      ++stats.orphan_completions;
      return;
    }
    const PostedRecv& p = it->second;
    if (ev.flags & trace::flag::cancelled) {  // no message
      resolve(p.seq, std::nullopt);
      pending.erase(it);
      return;
    }
    auto ch = receive_channel(p.comm, p.given_source, p.given_tag, mpi_args(ev).src(), mpi_args(ev).stag(), ev, pos);
    resolve(p.seq, ch);
    pending.erase(it);
  }

  // A receive posted (Irecv, a persistent receive's start, Isendrecv's
  // receive half): it takes its message where its request completes.
  void post_receive(int32_t comm, int64_t source, int64_t tag, const trace::Event& ev, const EventPos& pos) {
    auto old = pending.find(mpi_args(ev).request());
    if (old != pending.end()) {  // the id was reused: the earlier receive never completed
      ++stats.never_completed;
      resolve(old->second.seq, std::nullopt);
    }
    pending[mpi_args(ev).request()] = PostedRecv{comm, source, tag, post(pos)};
  }

  void observe(const trace::Event& ev, const EventPos& pos);
  void check_and_emit();
};

void MessageMatcher::Impl::observe(const trace::Event& ev, const EventPos& pos) {
  OpClass op = ev.op();
  if (op == OpClass::complete) return complete(ev, pos);
  if (op == OpClass::start) {  // a persistent request started: a send, or a receive posted
    int64_t kind = mpi_args(ev).req_kind();
    if (kind == trace::kReqSend) op = OpClass::isend;
    if (kind == trace::kReqRecv) op = OpClass::irecv;
  }
  if (op != OpClass::send && op != OpClass::isend && op != OpClass::recv && op != OpClass::irecv &&
      op != OpClass::sendrecv)
    return;
  if (ev.ret != 0) return;  // a failed call moved no message
  const trace::MpiArgs a = mpi_args(ev);
  int32_t comm = scope->comm(ev, pos);
  if (ev.flags & trace::flag::on_behalf) {
    // Logged by this rank, the receiver, for its sender (thesis §2.1.5): the
    // peer is the sender.
    int64_t source = a.peer();
    if (source == trace::kProcNull) return;
    add_send({comm, scope->world_rank(comm, source, ev, pos, "sender"), scope->rank(), a.tag()}, pos);
    return;
  }
  switch (op) {
    case OpClass::send:
    case OpClass::isend:
      send_to(comm, a.peer(), a.tag(), ev, pos);
      // MPI_Isendrecv: its request completes as the receive half.
      if (ev.flags & trace::flag::recv_too) post_receive(comm, a.peer2(), a.isr_tag(), ev, pos);
      return;
    case OpClass::recv:
      return receive_now(comm, a.peer(), a.tag(), ev, pos);
    case OpClass::sendrecv:
      send_to(comm, a.peer(), a.tag(), ev, pos);
      return receive_now(comm, a.peer2(), a.tag2(), ev, pos);
    case OpClass::irecv:
      return post_receive(comm, a.peer(), a.tag(), ev, pos);
    default:
      return;
  }
}

void MessageMatcher::Impl::check_and_emit() {
  std::vector<std::pair<Channel, const ChannelState*>> sorted;
  sorted.reserve(channels.size());
  for (const auto& [ch, s] : channels) sorted.emplace_back(ch, &s);
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [ch, s] : sorted) {
    if (s->received <= s->sent) continue;
    throw ToolError("receive without a matching send (the replay would hang): rank " + std::to_string(ch.dest) + " (" +
                    set->path(ch.dest) + ") received " + std::to_string(s->received) + " messages from rank " +
                    std::to_string(ch.source) + " on communicator " + std::to_string(ch.comm) + " with tag " +
                    std::to_string(ch.tag) + ", but rank " + std::to_string(ch.source) + " (" + set->path(ch.source) +
                    ") sent " + std::to_string(s->sent));
  }
  stats.channels = sorted.size();
  for (const auto& [ch, s] : sorted) {
    stats.messages += s->received;
    if (s->sent > s->received) {
      stats.unreceived += s->sent - s->received;
      stats.unreceived_channels.push_back({ch, s->sent, s->received});
    }
    if (!sink) continue;
    const ChannelEnds& e = ends[size_t(s->ends)];
    for (size_t k = 0; k < e.recvs.size(); ++k) sink(MessagePair{ch, k, e.sends[k], e.recvs[k]});
  }
}

MessageMatcher::MessageMatcher(const TraceSet& set, PairSink sink) : impl_(std::make_unique<Impl>()) {
  impl_->set = &set;
  impl_->sink = std::move(sink);
}
MessageMatcher::~MessageMatcher() = default;

void MessageMatcher::begin_rank(const RankScope& scope) {
  impl_->scope = &scope;
  impl_->pending.clear();
  impl_->window.clear();
  impl_->window_base = impl_->posted = 0;
}

void MessageMatcher::observe(const trace::Event& ev, const EventPos& pos) { impl_->observe(ev, pos); }

void MessageMatcher::end_rank() {
  Impl& m = *impl_;
  // Receives never completed (cancelled, freed, or the run ended first) are
  // not messages; release the receives queued behind them.
  m.stats.never_completed += m.pending.size();
  for (const auto& [id, p] : m.pending) m.resolve(p.seq, std::nullopt);
  m.pending.clear();
  m.scope = nullptr;
}

PairingStats MessageMatcher::finish() {
  impl_->check_and_emit();
  return std::move(impl_->stats);
}

}  // namespace mpior::postproc
