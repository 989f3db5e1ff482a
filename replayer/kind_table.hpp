// Tables indexed by event kind, built at compile time from the kinds the
// generator expands from trace/api/*.list (trace/kinds.inc): each family
// registers its handler once, an op class within a family may register its
// own, and every kind of the lists gets its family's (or its op class's)
// handler. A kind added to a list needs no code here; a kind that nothing
// registered for (a new family, a new tracer record) leaves its entry empty,
// which `every_kind_handled` turns into a build failure. A kind the replay
// deliberately does nothing for is registered with a handler that says so.
// Kinds an op class's calls tell apart by the facts of their list lines
// (trace/kind.hpp fact::: fstat's by_fd among the stat calls, fdatasync's
// datasync among the syncs) get the handler registered for their op class
// and those facts; two such registrations claiming one kind fail the build
// too (`no_kind_claimed_twice`).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "trace/kind.hpp"

namespace mpior::replay {

template <class H>
struct Registration {
  trace::Family family;
  std::optional<trace::OpClass> op;  // none: the family's kinds that no op class claims
  H handler;
  uint32_t facts = 0;  // with an op class: only its kinds with all these facts
};

// The handlers by kind, and which kinds a registration covered: whether an
// entry is set is kept apart from the handler, since comparing a member
// function pointer with null is no constant expression under GCC's
// sanitizers.
template <class H>
struct KindTable {
  std::array<H, trace::kNumKinds> handlers{};
  std::array<bool, trace::kNumKinds> set{};
  std::array<uint8_t, trace::kNumKinds> by_facts{};  // registrations with facts that claimed the kind
  constexpr const H& operator[](size_t k) const { return handlers[k]; }
};

// The most specific registration wins: the family's, its op class's, its op
// class's with the kind's facts.
template <class H, size_t N>
constexpr KindTable<H> kind_table(const Registration<H> (&regs)[N]) {
  KindTable<H> table;
  for (size_t k = 0; k < trace::kNumKinds; ++k) {
    const trace::KindInfo& kind = trace::kKindInfos[k];
    const uint32_t facts = trace::kKindFacts[k];
    for (const Registration<H>& r : regs)
      if (r.family == kind.family && !r.op) table.handlers[k] = r.handler, table.set[k] = true;
    for (const Registration<H>& r : regs)
      if (r.family == kind.family && r.op == kind.op && !r.facts) table.handlers[k] = r.handler, table.set[k] = true;
    for (const Registration<H>& r : regs)
      if (r.family == kind.family && r.op == kind.op && r.facts && (facts & r.facts) == r.facts) {
        table.handlers[k] = r.handler, table.set[k] = true;
        ++table.by_facts[k];
      }
  }
  return table;
}

template <class H>
constexpr bool every_kind_handled(const KindTable<H>& table) {
  for (bool set : table.set)
    if (!set) return false;
  return true;
}

template <class H>
constexpr bool no_kind_claimed_twice(const KindTable<H>& table) {
  for (uint8_t n : table.by_facts)
    if (n > 1) return false;
  return true;
}

}  // namespace mpior::replay
