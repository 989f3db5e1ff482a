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

template <class H, size_t N>
constexpr std::array<H, trace::kNumKinds> kind_table(const Registration<H> (&regs)[N]) {
  std::array<H, trace::kNumKinds> table{};
  for (size_t k = 0; k < trace::kNumKinds; ++k) {
    const trace::KindInfo& kind = trace::kKindInfos[k];
    for (const Registration<H>& r : regs)
      if (r.family == kind.family && !r.op) table[k] = r.handler;
    for (const Registration<H>& r : regs)
      if (r.family == kind.family && r.op == kind.op) table[k] = r.handler;
  }
  return table;
}

template <class H>
constexpr bool every_kind_handled(const std::array<H, trace::kNumKinds>& table) {
  for (const H& h : table)
    if (!h) return false;
  return true;
}

}  // namespace mpior::replay
