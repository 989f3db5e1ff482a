// AIO requests in flight, shared by the two AIO APIs the tracer records:
// POSIX aio_* (aio_handlers.cpp, keyed by the program's aiocb) and Linux's
// native AIO through libaio (libaio_handlers.cpp, keyed by its iocb). A
// request lives here from its submit until the program learns it finished;
// then one mpior_aio_done record, nested under the call that told the
// program, carries what it did.
#pragma once

#include <atomic>
#include <cstdint>

#include "preload/wrapper_support.hpp"

namespace mpior::preload::aio {

struct Request {
  int64_t id = 0;
  int fd = -1;
  int32_t file = -1;
  int64_t offset = 0;
  int64_t count = 0;
  int64_t op = 0;
  uint64_t ctx = 0;  // libaio's io_context_t; 0 for a POSIX request
  uint8_t depth = 0;
  trace::Kind kind{};  // the submitting call (aio_write64, lio_listio, io_submit ...)
};

// Requests in flight, keyed by their control block: open addressing,
// lock-free. A slot's key goes empty -> busy -> cb -> busy -> tomb -> busy ->
// cb ... (never back to empty, so a probe stops at the first empty slot);
// whoever moves it to busy by CAS owns the fields until it publishes the next
// key. One round (submit, suspend, return) costs a few atomic operations.
class Table {
 public:
  static constexpr size_t kSlots = 4096;

  // Registers a request; false when the table is full (it goes untraced).
  bool add(const void* cb, const Request& r) {
    size_t h = hash(cb);
    for (size_t i = 0; i < kSlots; ++i) {
      Slot& e = slots_[(h + i) % kSlots];
      uintptr_t k = e.key.load(std::memory_order_acquire);
      if ((k == kEmpty || k == kTomb) && e.key.compare_exchange_strong(k, kBusy, std::memory_order_acquire)) {
        e.r = r;
        live_.fetch_add(1, std::memory_order_relaxed);
        e.key.store(reinterpret_cast<uintptr_t>(cb), std::memory_order_release);
        return true;
      }
    }
    return false;
  }

  // Removes the request of cb into out; false when cb is not in flight.
  bool take(const void* cb, Request& out) {
    if (!cb || live_.load(std::memory_order_relaxed) == 0) return false;
    Slot* e = find(cb);
    if (!e) return false;
    return take_slot(*e, reinterpret_cast<uintptr_t>(cb), out);
  }

  bool holds(const void* cb) { return cb && live_.load(std::memory_order_relaxed) != 0 && find(cb); }

  // Takes every request whose field equals value (an fd at its close, a
  // libaio context at its destruction), calling f(cb, request) for each.
  template <typename T, typename F>
  void take_where(T Request::*field, T value, F&& f) {
    if (live_.load(std::memory_order_relaxed) == 0) return;
    for (Slot& e : slots_) {
      uintptr_t k = e.key.load(std::memory_order_acquire);
      // A glance at the field (relaxed: the slot's owner may be filling it),
      // checked again once the slot is ours.
      if (k <= kBusy || __atomic_load_n(&(e.r.*field), __ATOMIC_RELAXED) != value) continue;
      if (!e.key.compare_exchange_strong(k, kBusy, std::memory_order_acquire)) continue;
      if (e.r.*field != value) {
        e.key.store(k, std::memory_order_release);
        continue;
      }
      Request r = e.r;
      live_.fetch_sub(1, std::memory_order_relaxed);
      e.key.store(kTomb, std::memory_order_release);
      f(reinterpret_cast<const void*>(k), r);
    }
  }
  template <typename F>
  void take_all(F&& f) {
    if (live_.load(std::memory_order_relaxed) == 0) return;
    for (Slot& e : slots_) {
      uintptr_t k = e.key.load(std::memory_order_acquire);
      Request r;
      if (k > kBusy && take_slot(e, k, r)) f(reinterpret_cast<const void*>(k), r);
    }
  }

  int64_t next_id() { return next_id_.fetch_add(1, std::memory_order_relaxed); }

 private:
  static constexpr uintptr_t kEmpty = 0, kTomb = 1, kBusy = 2;
  struct Slot {
    std::atomic<uintptr_t> key{kEmpty};
    Request r;
  };

  Slot* find(const void* cb) {
    uintptr_t want = reinterpret_cast<uintptr_t>(cb);
    size_t h = hash(cb);
    for (size_t i = 0; i < kSlots; ++i) {
      Slot& e = slots_[(h + i) % kSlots];
      uintptr_t k = e.key.load(std::memory_order_acquire);
      if (k == want) return &e;
      if (k == kEmpty) return nullptr;
    }
    return nullptr;
  }
  bool take_slot(Slot& e, uintptr_t k, Request& out) {
    if (!e.key.compare_exchange_strong(k, kBusy, std::memory_order_acquire)) return false;
    out = e.r;
    live_.fetch_sub(1, std::memory_order_relaxed);
    e.key.store(kTomb, std::memory_order_release);
    return true;
  }
  static size_t hash(const void* p) { return (reinterpret_cast<uintptr_t>(p) >> 4) % kSlots; }

  std::atomic<int64_t> live_{0};
  std::atomic<int64_t> next_id_{1};
  Slot slots_[kSlots];
};

// The process's one table (never freed: exit handlers use it).
Table& table();

inline uint8_t child_depth(const Call& c) { return uint8_t(c.ev().depth < 254 ? c.ev().depth + 1 : 255); }

// A request's completion record (time, depth and call site set by the caller).
trace::RawEvent done_event(const Request& r, int err, int64_t bytes) noexcept;
// The completion record of r, nested under c.
void record_done(Call& c, const Request& r, int err, int64_t bytes) noexcept;
// A submit record (mpior_aio_op) of r nested under c, accepted or not (err).
void record_op(Call& c, const Request& r, bool accepted, int err) noexcept;

}  // namespace mpior::preload::aio
