// dlopen, watched for RTLD_DEEPBIND. A library loaded with that flag looks
// its symbols up in itself and its own dependencies (libc) before the global
// scope, where the preloaded tracer comes first: its reads and writes go to
// libc's functions and are not traced. Rebinding them would change how the
// program's symbols resolve (what the flag asks for), so the tracer says so
// instead, once per library, naming it.
//
// dlopen resolves the name from its caller (the caller's RUNPATH, $ORIGIN,
// its link namespace), which glibc finds from dlopen's return address: the
// interposer below is a jump to libc's dlopen after the look at the flags,
// not a call, so glibc sees the program's return address as without the
// tracer (x86-64, as the tracer).
#include <dlfcn.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "preload/log.hpp"
#include "preload/wrapper_support.hpp"

namespace mpior::preload {

namespace {

using DlopenFn = void* (*)(const char*, int);
std::atomic<DlopenFn> g_real_dlopen{nullptr};

// The libraries already named, by their name's hash: a program reopening
// one is told once. Beyond the table's size a library is named again.
constexpr int kNamed = 64;
std::atomic<uint64_t> g_named[kNamed];

bool first_time(const char* file) noexcept {
  uint64_t h = 1469598103934665603ull;  // FNV-1a, never 0 for the names dlopen takes
  for (const char* p = file; *p; ++p) h = (h ^ uint8_t(*p)) * 1099511628211ull;
  for (auto& slot : g_named) {
    uint64_t seen = 0;
    if (slot.compare_exchange_strong(seen, h)) return true;
    if (seen == h) return false;
  }
  return true;
}

}  // namespace

}  // namespace mpior::preload

using namespace mpior::preload;

// Called by the interposer with dlopen's arguments: the real dlopen.
extern "C" __attribute__((used, visibility("hidden"))) void* mpior_dlopen_seen(const char* file, int mode) {
  int saved = errno;
  DlopenFn real = resolved_once(g_real_dlopen, "dlopen");
  if ((mode & RTLD_DEEPBIND) && file && !(mode & RTLD_NOLOAD) && first_time(file))
    log_warn(
        "{} is loaded with RTLD_DEEPBIND: it binds its own calls to libc ahead of the tracer, so the I/O it "
        "makes is not traced",
        file);
  errno = saved;  // as the program left it: dlopen sets its own
  return reinterpret_cast<void*>(real);
}

// dlopen: keeps the arguments, asks mpior_dlopen_seen, jumps to the real
// dlopen with the caller's return address still on the stack (16-byte
// alignment at the call: the entry's 8 plus 24 pushed).
asm(R"(
  .text
  .globl dlopen
  .type dlopen, @function
dlopen:
  .cfi_startproc
  endbr64
  push %rdi
  .cfi_adjust_cfa_offset 8
  push %rsi
  .cfi_adjust_cfa_offset 8
  sub $8, %rsp
  .cfi_adjust_cfa_offset 8
  call mpior_dlopen_seen
  add $8, %rsp
  .cfi_adjust_cfa_offset -8
  pop %rsi
  .cfi_adjust_cfa_offset -8
  pop %rdi
  .cfi_adjust_cfa_offset -8
  jmp *%rax
  .cfi_endproc
  .size dlopen, .-dlopen
)");
