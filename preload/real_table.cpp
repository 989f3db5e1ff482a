#include "preload/real_table.hpp"

#include <dlfcn.h>

namespace mpior::preload::real {

Table table;

void* resolve(const char* symbol) noexcept {
  void* f = dlsym(RTLD_NEXT, symbol);
  // Functions glibc keeps only as compatibility symbols (__xstat and kin,
  // which programs built against older glibc still call).
  if (!f) f = dlvsym(RTLD_NEXT, symbol, "GLIBC_2.2.5");
  return f;
}

void resolve_all() noexcept {
#define MPIOR_RESOLVE(field, symbol) \
  if (!table.field) table.field = reinterpret_cast<Table::field##_t>(resolve(symbol));
  MPIOR_REAL_TABLE_ENTRIES(MPIOR_RESOLVE)
#undef MPIOR_RESOLVE
}

}  // namespace mpior::preload::real
