#include "preload/callsite.hpp"

#include <dlfcn.h>

#include <cstring>

#include "preload/config.hpp"
#include "preload/thread_state.hpp"
#include "preload/unwinder.hpp"

namespace mpior::preload {
namespace {

constinit config::Option<int64_t> opt_stack_depth{
    "MPIOR_STACK_DEPTH", 1,
    "stack frames hashed into an event's call-site signature (1 = the calling instruction only, "
    "no unwinding; more frames tell apart calls reached through a shared helper, at a cost per call)"};
MPIOR_REGISTER_OPTION(opt_stack_depth);

constexpr int kMaxDepth = 16;
constexpr int kMaxSkip = 8;

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xFF51AFD7ED558CCDull;
}

uint64_t name_hash(const char* path) {
  const char* base = path ? std::strrchr(path, '/') : nullptr;
  base = base ? base + 1 : (path ? path : "");
  uint64_t h = 1469598103934665603ull;
  for (const char* p = base; *p; ++p) h = (h ^ uint8_t(*p)) * 1099511628211ull;
  return h;
}

const void* own_base() {
  static const void* base = [] {
    Dl_info info{};
    dladdr(reinterpret_cast<void*>(&own_base), &info);
    return info.dli_fbase;
  }();
  return base;
}

}  // namespace

int stack_depth() noexcept {
  int64_t d = opt_stack_depth.get();
  return d < 1 ? 1 : d > kMaxDepth ? kMaxDepth : int(d);
}

const CallsiteCache::Entry& CallsiteCache::lookup(uint64_t raw, bool* ours) noexcept {
  const unsigned i = slot(raw);
  Entry& e = slots_[i];
  uint64_t& bits = ours_[i / 64];
  const uint64_t bit = uint64_t(1) << (i % 64);
  if (e.raw != raw || raw == 0) {
    Dl_info info{};
    e.raw = raw;
    bool own = false;
    if (raw && dladdr(reinterpret_cast<void*>(raw), &info) && info.dli_fbase) {
      uint64_t offset = raw - reinterpret_cast<uint64_t>(info.dli_fbase);
      e.hash = mix(name_hash(info.dli_fname), offset);
      own = info.dli_fbase == own_base();
    } else {
      e.hash = mix(0, raw);
    }
    bits = own ? bits | bit : bits & ~bit;
  }
  if (ours) *ours = (bits & bit) != 0;
  return e;
}

uint64_t CallsiteCache::signature_slow(uint64_t ret_addr, int depth) noexcept {
  took_slow_path();
  uint64_t h = lookup(ret_addr).hash;
  if (depth <= 1) return h;
  void* frames[kMaxDepth + kMaxSkip];
  int n = unwinder::backtrace(frames, depth + kMaxSkip);
  int taken = 1;
  bool past_caller = false;
  for (int i = 0; i < n && taken < depth; ++i) {
    uint64_t raw = reinterpret_cast<uint64_t>(frames[i]);
    if (!past_caller) {  // frames up to and including the application's call site
      past_caller = raw == ret_addr;
      continue;
    }
    bool ours = false;
    const Entry& e = lookup(raw, &ours);
    if (ours) continue;
    h = mix(h, e.hash);
    ++taken;
  }
  return h;
}

}  // namespace mpior::preload
