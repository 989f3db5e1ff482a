#include "preload/piggyback/receive_order.hpp"

namespace mpior::piggyback {
namespace {

bool compatible(Envelope given, Envelope status) {
  return (given.source < 0 || given.source == status.source) && (given.tag < 0 || given.tag == status.tag);
}

}  // namespace

void ReceiveOrder::posted(int32_t comm, uint64_t handle, Envelope given) { pending_[comm].push_back({handle, given}); }

uint64_t ReceiveOrder::number(int32_t comm, Envelope status) { return next_.next({comm, status.source, status.tag}); }

// Receives posted before `end` that could have taken a message of `status`'s
// channel were matched before it: number them first, in posting order.
void ReceiveOrder::number_earlier(int32_t comm, Queue& q, Queue::iterator end, Envelope status) {
  for (auto it = q.begin(); it != end;) {
    if (it->numbered || !compatible(it->given, status)) {
      ++it;
      continue;
    }
    Envelope matched;
    if (!probe_(it->handle, &matched)) {  // never matched anything: drop it
      it = q.erase(it);
      continue;
    }
    it->numbered = true;
    it->given = matched;  // from now on, the channel it belongs to
    // A wildcard receive may have matched another channel than status's,
    // after receives posted before it took that channel's earlier messages.
    number_earlier(comm, q, it, matched);
    it->seq = number(comm, matched);
    ++it;
  }
}

uint64_t ReceiveOrder::completed(int32_t comm, uint64_t handle, Envelope status) {
  Queue& q = pending_[comm];
  auto self = q.begin();
  while (self != q.end() && self->handle != handle) ++self;
  if (self == q.end()) return completed_blocking(comm, status);  // posted before tracing knew of it
  if (self->numbered) {
    uint64_t seq = self->seq;
    q.erase(self);
    return seq;
  }
  number_earlier(comm, q, self, status);
  q.erase(self);
  return number(comm, status);
}

uint64_t ReceiveOrder::completed_blocking(int32_t comm, Envelope status) {
  auto it = pending_.empty() ? pending_.end() : pending_.find(comm);
  if (it != pending_.end()) number_earlier(comm, it->second, it->second.end(), status);
  return number(comm, status);
}

void ReceiveOrder::forget(int32_t comm, uint64_t handle) {
  Queue& q = pending_[comm];
  for (auto it = q.begin(); it != q.end(); ++it)
    if (it->handle == handle) {
      q.erase(it);
      return;
    }
}

size_t ReceiveOrder::outstanding() const {
  size_t n = 0;
  for (const auto& [comm, q] : pending_) n += q.size();
  return n;
}

}  // namespace mpior::piggyback
