#include "preload/lineage.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace mpior::preload::lineage {
namespace {
constexpr const char* kVar = "MPIOR_PARENT";
}

// "job:rank:size:mono:real:kind:dir" (kind: r a rank, s a standalone
// program) — the directory last: it may hold colons.
std::optional<Parent> inherited() {
  const char* v = std::getenv(kVar);
  if (!v || !*v) return std::nullopt;
  Parent p;
  int used = 0;
  char kind = 0;
  if (std::sscanf(v, "%" SCNx64 ":%" SCNd32 ":%" SCNd32 ":%" SCNd64 ":%" SCNd64 ":%c:%n", &p.job_id, &p.rank, &p.size,
                  &p.mono_ns, &p.real_ns, &kind, &used) != 6 ||
      used <= 0 || v[used] != '/' || (kind != 'r' && kind != 's') || p.rank < 0 || p.size <= p.rank)
    return std::nullopt;
  p.mpi_rank = kind == 'r';
  p.dir = v + used;
  return p;
}

void announce(const Parent& p) {
  std::string v(64 + p.dir.size(), '\0');
  int n = std::snprintf(v.data(), v.size(), "%" PRIx64 ":%" PRId32 ":%" PRId32 ":%" PRId64 ":%" PRId64 ":%c:%s",
                        p.job_id, p.rank, p.size, p.mono_ns, p.real_ns, p.mpi_rank ? 'r' : 's', p.dir.c_str());
  if (n <= 0 || size_t(n) >= v.size()) return;
  v.resize(size_t(n));
  setenv(kVar, v.c_str(), 1);
}

}  // namespace mpior::preload::lineage
