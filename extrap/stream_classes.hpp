// Stream classes across the input plans: the streams of equal structure
// (thread, loop tree, positions by kind and call site) at every rank count,
// with the ranks that run them at each, and each rank's kind (its class per
// thread), which decides its file and communicator tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/model.hpp"

namespace mpior::extrap {

struct Input {
  std::string name;  // as the user named it
  trace::Plan plan;
  int64_t n = 0;
};

struct StreamClass {
  const trace::Stream* shape = nullptr;               // one of its streams (structure only)
  std::vector<std::vector<const trace::Stream*>> at;  // per input: its streams there
  std::vector<std::vector<int64_t>> ranks;            // per input: ranks, ascending
  std::string name() const;                           // "thread 0, 12 positions, first: open"
};

// A thread index's classes, plus the "no such thread" class when some ranks
// lack the thread (so the classes partition every input's ranks).
struct ThreadClasses {
  uint32_t thread = 0;
  std::vector<size_t> classes;             // indices into Classes::all
  std::vector<std::vector<int64_t>> none;  // per input: ranks without this thread
};

struct Classes {
  std::vector<StreamClass> all;
  std::vector<ThreadClasses> threads;
};

// Throws ToolError when the inputs cannot be the same program's.
Classes find_classes(const std::vector<Input>& inputs);

// "position 4: write at call site 0x1234 here, pwrite at 0x99 there"
std::string first_difference(const trace::Stream& a, const trace::Stream& b);

}  // namespace mpior::extrap
