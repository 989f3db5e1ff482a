// Tables indexed by event kind, built at compile time from the kinds the
// generator expands from trace/api/*.list (trace/kinds.inc): each family
// registers its handler once, an op class within a family may register its
// own, and every kind of the lists gets its family's (or its op class's)
// handler. A kind added to a list needs no code here; a kind that nothing
// registered for (a new family, a new tracer record) leaves its entry empty,
// which `every_kind_handled` turns into a build failure. A kind the replay
// deliberately does nothing for is registered with a handler that says so.
#pragma once

#include <array>
#include <cstddef>
#include <optional>

#include "trace/kind.hpp"

namespace mpior::replay {

template <class H>
struct Registration {
  trace::Family family;
  std::optional<trace::OpClass> op;  // none: the family's kinds that no op class claims
  H handler;
};

// The handlers by kind, and which kinds a registration covered: whether an
// entry is set is kept apart from the handler, since comparing a member
// function pointer with null is no constant expression under GCC's
// sanitizers.
template <class H>
struct KindTable {
  std::array<H, trace::kNumKinds> handlers{};
  std::array<bool, trace::kNumKinds> set{};
  constexpr const H& operator[](size_t k) const { return handlers[k]; }
};

template <class H, size_t N>
constexpr KindTable<H> kind_table(const Registration<H> (&regs)[N]) {
  KindTable<H> table;
  for (size_t k = 0; k < trace::kNumKinds; ++k) {
    const trace::KindInfo& kind = trace::kKindInfos[k];
    for (const Registration<H>& r : regs)
      if (r.family == kind.family && !r.op) table.handlers[k] = r.handler, table.set[k] = true;
    for (const Registration<H>& r : regs)
      if (r.family == kind.family && r.op == kind.op) table.handlers[k] = r.handler, table.set[k] = true;
  }
  return table;
}

template <class H>
constexpr bool every_kind_handled(const KindTable<H>& table) {
  for (bool set : table.set)
    if (!set) return false;
  return true;
}

}  // namespace mpior::replay
