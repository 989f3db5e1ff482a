// ReceiveOrder against MPI's matching rules, simulated at one receiver: a
// message goes to the earliest-posted unmatched receive that can take it,
// else waits in the unexpected queue for the next receive that can. Random
// (seeded, so reproducible) runs of sends, posts, completions in any order,
// blocking receives and cancellations check that every completed receive is
// given the sequence number its sender gave the message it got.
#include <catch2/catch.hpp>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "preload/piggyback/receive_order.hpp"

using namespace mpior::piggyback;

namespace {

constexpr int32_t kAny = -1;
constexpr int32_t kSelf = 0;  // the receiver's rank

struct Message {
  int32_t comm, source, tag;
  uint64_t seq;  // from the sender's SendOrder
};

struct Receive {
  int32_t comm;
  Envelope given;
  std::optional<Message> got;
  bool cancelled = false;
  bool done = false;
};

bool compatible(Envelope given, const Message& m) {
  return (given.source == kAny || given.source == m.source) && (given.tag == kAny || given.tag == m.tag);
}

class Receiver {
 public:
  Receiver() : order_([this](uint64_t h, Envelope* out) { return probe(h, out); }) {}
  Receiver(const Receiver&) = delete;  // the probe points at this one
  Receiver& operator=(const Receiver&) = delete;

  void arrive(const Message& m) {
    for (uint64_t h : posting_order_) {
      Receive& r = receives_[h];
      if (r.comm == m.comm && !r.got && !r.cancelled && compatible(r.given, m)) {
        r.got = m;
        return;
      }
    }
    unexpected_.push_back(m);
  }

  void post(int32_t comm, Envelope given) {
    uint64_t h = next_handle_++;
    Receive r{comm, given, take_unexpected(comm, given)};
    receives_[h] = r;
    posting_order_.push_back(h);
    order_.posted(comm, h, given);
  }

  // A blocking receive posted now; false when no message for it has arrived
  // (it would block, and the simulation has a single thread).
  bool receive_blocking(int32_t comm, Envelope given) {
    std::optional<Message> m = take_unexpected(comm, given);
    if (!m) return false;
    CHECK(order_.completed_blocking(comm, {m->source, m->tag}) == m->seq);
    ++checked_;
    return true;
  }

  void complete(uint64_t h) {
    Receive& r = receives_.at(h);
    REQUIRE(r.got);
    INFO("receive " << h << " got " << r.got->source << ":" << r.got->tag << " #" << r.got->seq);
    CHECK(order_.completed(r.comm, h, {r.got->source, r.got->tag}) == r.got->seq);
    r.done = true;
    ++checked_;
  }

  // MPI_Cancel of an unmatched receive; the tracer hears of it now or later.
  void cancel(uint64_t h, bool forget_now) {
    Receive& r = receives_.at(h);
    r.cancelled = true;
    r.done = true;
    if (forget_now) order_.forget(r.comm, h);
  }

  std::vector<uint64_t> open(bool matched) const {
    std::vector<uint64_t> hs;
    for (const auto& [h, r] : receives_)
      if (!r.done && bool(r.got) == matched) hs.push_back(h);
    return hs;
  }

  // Forgets the cancelled receives the tracer was not told about yet.
  void forget_cancelled() {
    for (const auto& [h, r] : receives_)
      if (r.cancelled) order_.forget(r.comm, h);
  }

  size_t outstanding() const { return order_.outstanding(); }
  size_t checked() const { return checked_; }

 private:
  bool probe(uint64_t h, Envelope* out) {
    const Receive& r = receives_.at(h);
    if (r.cancelled) return false;
    // The tracer only asks about receives MPI must already have matched.
    REQUIRE(r.got);
    *out = {r.got->source, r.got->tag};
    return true;
  }

  std::optional<Message> take_unexpected(int32_t comm, Envelope given) {
    for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it)
      if (it->comm == comm && compatible(given, *it)) {
        Message m = *it;
        unexpected_.erase(it);
        return m;
      }
    return std::nullopt;
  }

  ReceiveOrder order_;
  std::map<uint64_t, Receive> receives_;
  std::vector<uint64_t> posting_order_;
  std::deque<Message> unexpected_;
  uint64_t next_handle_ = 1;
  size_t checked_ = 0;
};

struct Random {
  std::mt19937 gen;
  int below(int n) { return std::uniform_int_distribution<int>(0, n - 1)(gen); }
  template <class T>
  T pick(const std::vector<T>& v) {
    return v[size_t(below(int(v.size())))];
  }
};

// Small ranges of sources, tags and communicators, so receives compete.
struct Scenario {
  explicit Scenario(unsigned seed) : rnd{std::mt19937(seed)} {}
  Random rnd;
  Receiver rx;
  std::vector<SendOrder> senders = std::vector<SendOrder>(4);  // ranks 1..3 send

  void send() {
    int32_t src = 1 + rnd.below(3), comm = rnd.below(2), tag = rnd.below(3);
    rx.arrive({comm, src, tag, senders[size_t(src)].next(comm, kSelf, tag)});
  }
  Envelope envelope() { return {rnd.below(3) == 0 ? kAny : 1 + rnd.below(3), rnd.below(3) == 0 ? kAny : rnd.below(3)}; }
  void step() {
    switch (rnd.below(6)) {
      case 0:
      case 1:
        send();
        break;
      case 2:
        rx.post(rnd.below(2), envelope());
        break;
      case 3:
        if (auto hs = rx.open(true); !hs.empty()) rx.complete(rnd.pick(hs));
        break;
      case 4:
        rx.receive_blocking(rnd.below(2), envelope());
        break;
      case 5:
        if (auto hs = rx.open(false); !hs.empty() && rnd.below(4) == 0) rx.cancel(rnd.pick(hs), rnd.below(2));
        break;
    }
  }
  // Completes what matched, in random order; cancels what never will.
  void drain() {
    for (auto hs = rx.open(true); !hs.empty(); hs = rx.open(true)) rx.complete(rnd.pick(hs));
    for (uint64_t h : rx.open(false)) rx.cancel(h, rnd.below(2));
    rx.forget_cancelled();
  }
};

}  // namespace

TEST_CASE("receive order: random runs under MPI matching rules number every receive as its sender did",
          "[piggyback][receive_order][simulation]") {
  const unsigned seed = GENERATE(range(1u, 301u));
  INFO("seed " << seed);
  Scenario s(seed);
  for (int i = 0; i < 60; ++i) s.step();
  s.drain();
  CHECK(s.rx.outstanding() == 0);
  CHECK(s.rx.checked() > 0);
}

TEST_CASE("receive order: out-of-order completion on one channel, simulated", "[piggyback][receive_order]") {
  Receiver rx;
  SendOrder sender;
  for (int i = 0; i < 4; ++i) rx.post(0, {1, 0});
  for (int i = 0; i < 4; ++i) rx.arrive({0, 1, 0, sender.next(0, kSelf, 0)});
  for (uint64_t h : {3, 1, 4, 2}) rx.complete(h);
  CHECK(rx.checked() == 4);
  CHECK(rx.outstanding() == 0);
}
