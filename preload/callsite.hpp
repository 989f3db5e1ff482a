// Call-site signatures: a hash of the return addresses on the stack, each
// made relative to the object it lies in (so every rank of a job, whatever its
// address-space layout, gives the same call site the same signature).
#pragma once

#include <cstdint>

namespace mpior::preload {

// Per-thread cache from raw return addresses to module-relative hashes.
class CallsiteCache {
 public:
  // Signature of the call whose innermost return address is `ret_addr`,
  // hashing `depth` frames of the application's stack (1: that address only,
  // no unwinding; more: libunwind, frames inside libmpior skipped).
  // The common case (one frame, a call site seen before) stays inline: the
  // wrappers ask it for every call.
  uint64_t signature(uint64_t ret_addr, int depth) noexcept {
    const Entry& e = slots_[slot(ret_addr)];
    if (__builtin_expect(depth <= 1 && e.raw == ret_addr && ret_addr != 0, 1)) return e.hash;
    return signature_slow(ret_addr, depth);
  }

 private:
  // 16 bytes: an entry never straddles two cache lines. Whether an
  // address lies in libmpior (frames the unwinder skips, asked off the
  // common case only) is kept apart, a bit per slot.
  struct Entry {
    uint64_t raw = 0;
    uint64_t hash = 0;
  };
  static constexpr unsigned kSlots = 512;
  static unsigned slot(uint64_t raw) noexcept { return unsigned((raw ^ (raw >> 9)) % kSlots); }
  // The entry of `raw`, made if need be; *ours: the address lies in libmpior.
  const Entry& lookup(uint64_t raw, bool* ours = nullptr) noexcept;
  uint64_t signature_slow(uint64_t ret_addr, int depth) noexcept;
  Entry slots_[kSlots];
  uint64_t ours_[kSlots / 64] = {};
};

// Frames hashed per signature (MPIOR_STACK_DEPTH), read once at load.
int stack_depth() noexcept;

}  // namespace mpior::preload
