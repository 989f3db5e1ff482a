// Random nested loop programs for the builder's property tests: running one
// gives the events a traced SPMD code would record (bodies of several call
// sites, loops in loops with constant, growing or random trip counts,
// parameters that are constant, strided, nested-strided or random, and noise
// events in between), with their times.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "trace/arg_setters.hpp"
#include "trace/builder.hpp"
#include "trace/cursor.hpp"
#include "trace/event.hpp"

namespace mpior::test {

enum class ValueMode { constant, strided, nested, random };
enum class TripMode { constant, growing, random };

struct ProgNode {
  bool loop = false;
  // leaf
  trace::Kind kind{};
  uint8_t depth = 0;
  uint8_t flags = 0;
  uint64_t callsite = 0;
  std::array<ValueMode, trace::kNumArgs + 2> modes{};  // args, then ret, then err
  std::array<int64_t, trace::kNumArgs + 2> base{}, stride{}, stride2{};
  int64_t gap = 0, dur = 0;  // typical times
  uint64_t occurrences = 0;  // while running
  // loop
  TripMode trip_mode = TripMode::constant;
  int trips = 0;
  std::vector<ProgNode> body;
};

struct ProgShape {
  int max_depth = 3;  // loop nesting
  int max_body = 4;   // units per body
  int max_trips = 6;
  double noise = 0.0;  // chance of a noise event after each event
  int64_t max_events = 20000;
};

class ProgramRunner {
 public:
  ProgramRunner(uint64_t seed, ProgShape shape) : rng_(seed), shape_(shape) {}

  std::vector<ProgNode> make_program() {
    // A prologue, the main loop, an epilogue.
    std::vector<ProgNode> prog;
    for (int i = int(rng_() % 3); i > 0; --i) prog.push_back(make_node(0));
    ProgNode main_loop;
    main_loop.loop = true;
    main_loop.trips = 3 + int(rng_() % 30);
    for (int i = 1 + int(rng_() % uint64_t(shape_.max_body)); i > 0; --i)
      main_loop.body.push_back(make_node(shape_.max_depth - 1));
    prog.push_back(std::move(main_loop));
    for (int i = int(rng_() % 3); i > 0; --i) prog.push_back(make_node(0));
    return prog;
  }

  // Runs the program (as the body of one outer pass) and returns its events.
  std::vector<trace::RawEvent> run(std::vector<ProgNode>& prog) {
    events_.clear();
    std::vector<int64_t> idx;
    for (ProgNode& n : prog) exec(n, idx);
    return events_;
  }

 private:
  ProgNode make_node(int depth_left) {
    ProgNode n;
    if (depth_left > 0 && rng_() % 3 == 0) {
      n.loop = true;
      n.trip_mode = TripMode(rng_() % 3);
      n.trips = 2 + int(rng_() % uint64_t(shape_.max_trips));
      int units = 1 + int(rng_() % uint64_t(shape_.max_body));
      for (int i = 0; i < units; ++i) n.body.push_back(make_node(depth_left - 1));
      return n;
    }
    n.kind = trace::Kind(rng_() % trace::kNumKinds);
    n.depth = uint8_t(rng_() % 4 == 0);
    n.flags = uint8_t(rng_() % 5 == 0);
    n.callsite = next_site_++ * 0x1000193ull;
    for (size_t i = 0; i < n.modes.size(); ++i) {
      n.modes[i] = rng_() % 2 ? ValueMode::constant : ValueMode(rng_() % 4);
      n.base[i] = rng_() % 3 == 0 ? 0 : int64_t(rng_() % 100000) - 100;
      n.stride[i] = int64_t(rng_() % 9000) - 1000;
      n.stride2[i] = int64_t(rng_() % 100000);
    }
    n.gap = int64_t(rng_() % 5000);
    n.dur = int64_t(rng_() % 3000);
    return n;
  }

  int64_t value(const ProgNode& n, size_t i, const std::vector<int64_t>& idx) {
    switch (n.modes[i]) {
      case ValueMode::constant:
        return n.base[i];
      case ValueMode::strided:
        return n.base[i] + n.stride[i] * int64_t(n.occurrences);
      case ValueMode::nested: {
        int64_t inner = idx.empty() ? 0 : idx.back(), outer = idx.size() < 2 ? 0 : idx[idx.size() - 2];
        return n.base[i] + n.stride[i] * inner + n.stride2[i] * outer;
      }
      case ValueMode::random:
        return int64_t(rng_() % 7) - 2 + (rng_() % 2 ? int64_t(rng_() >> 8) : 0);
    }
    return 0;
  }

  void emit(ProgNode& n, const std::vector<int64_t>& idx) {
    trace::RawEvent ev;
    ev.kind = n.kind;
    ev.depth = n.depth;
    ev.flags = n.flags;
    ev.callsite = n.callsite;
    for (int i = 0; i < trace::kNumArgs; ++i) ev.args[size_t(i)] = value(n, size_t(i), idx);
    ev.ret = value(n, trace::kNumArgs, idx);
    ev.err = int32_t(value(n, trace::kNumArgs + 1, idx));
    clock_ += n.gap + int64_t(rng_() % 50);
    ev.start = clock_;
    ev.end = clock_ + n.dur + int64_t(rng_() % 20);
    clock_ = ev.end;
    ++n.occurrences;
    events_.push_back(ev);
    if (shape_.noise > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < shape_.noise) {
      trace::RawEvent noise = ev;
      noise.callsite = 0xBAD0000 + rng_() % 3;  // a few sites, so noise can repeat too
      io_args_mut(noise).handle() = int64_t(rng_() % 4);
      events_.push_back(noise);
    }
  }

  void exec(ProgNode& n, std::vector<int64_t>& idx) {
    if (int64_t(events_.size()) >= shape_.max_events) return;
    if (!n.loop) return emit(n, idx);
    int64_t outer = idx.empty() ? 0 : idx.back();
    int64_t trips = n.trips;
    if (n.trip_mode == TripMode::growing) trips += outer;
    if (n.trip_mode == TripMode::random) trips = 2 + int64_t(rng_() % uint64_t(n.trips));
    for (int64_t i = 0; i < trips; ++i) {
      idx.push_back(i);
      for (ProgNode& b : n.body) exec(b, idx);
      idx.pop_back();
    }
  }

  std::mt19937_64 rng_;
  ProgShape shape_;
  uint64_t next_site_ = 1;
  int64_t clock_ = 0;
  std::vector<trace::RawEvent> events_;
};

// Index of the first event the stream gives back differently, or -1 when it
// gives back exactly the input (times too when `times`).
inline int64_t first_difference(const trace::Stream& s, const std::vector<trace::RawEvent>& in, bool times,
                                size_t count = SIZE_MAX) {
  count = std::min(count, in.size());
  trace::EventCursor c(s, 0);
  trace::Event ev;
  size_t i = 0;
  while (c.next(ev)) {
    if (i >= count) return int64_t(i);
    const trace::RawEvent& r = in[i];
    bool same = ev.kind == r.kind && ev.depth == r.depth && ev.flags == r.flags && ev.callsite == r.callsite &&
                ev.args == r.args && ev.ret == r.ret && ev.err == r.err;
    if (times) same = same && ev.start_ns == r.start && ev.end_ns == r.end;
    if (!same) return int64_t(i);
    ++i;
  }
  return i == count ? -1 : int64_t(i);
}

}  // namespace mpior::test
