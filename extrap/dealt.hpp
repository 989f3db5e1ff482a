// Tables a library deals over the ranks: HDF5 flushes its metadata cache at
// a flush or file close as one list of entries sorted by address, split in
// blocks over the ranks (rank r takes share(E,r,n) of the E entries, after
// those of the ranks before it), each rank writing its block ring by ring,
// in cache order within a ring. A rank's offsets, sizes and count then
// depend on which entries it got, which no per-position model of (r, n)
// expresses: the table is rebuilt from every rank's values at each input,
// each entry's fields are fitted over n, and the table is dealt again at the
// target.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "extrap/models.hpp"
#include "extrap/stream_classes.hpp"
#include "trace/model.hpp"

namespace mpior::extrap {

// Field index of an entry: the argument slots, then the return value and errno.
constexpr int kRetField = trace::kNumArgs;
constexpr int kErrField = trace::kNumArgs + 1;
constexpr int kNumFields = trace::kNumArgs + 2;

class DealtTable {
 public:
  int64_t entries() const { return entries_; }
  // Occurrences each rank makes before its entries, fitted as usual.
  int64_t prefix() const { return prefix_; }
  // Whether field f comes from the table (handles, files and communicators
  // are names the ranks' own tables give, fitted as usual).
  bool dealt(int f) const { return f >= 0 && f < kNumFields && used_[size_t(f)]; }
  // Rank r's values of field f at n ranks, in its write order. Throws
  // ToolError when an entry's model gives no integer there.
  std::vector<int64_t> values(int f, int64_t r, int64_t n) const;
  // "8 entries dealt in blocks over the ranks, written ring by ring"
  std::string text() const;

  // Rank r's entries at n ranks, in its write order.
  std::vector<size_t> order(int64_t r, int64_t n) const;

  // Filled by DealtTables from the inputs.
  int64_t entries_ = 0;
  int64_t prefix_ = 0;
  std::vector<bool> used_ = std::vector<bool>(kNumFields, false);
  std::vector<int32_t> level_;          // per entry: its place in the write order
  std::vector<std::vector<Fit>> fits_;  // per entry, per field (a constant where unused)
};

// A position as every rank's stream shares it, whatever the class: the
// ordinal-th position of one kind, call site and depth on one thread
// (HDF5 writes all its metadata, data and superblock from one call site).
struct SiteKey {
  uint32_t thread = 0;
  trace::Kind kind{};
  uint64_t callsite = 0;
  uint8_t depth = 0;
  uint32_t ordinal = 0;
  auto operator<=>(const SiteKey&) const = default;
};

class DealtTables {
 public:
  explicit DealtTables(const std::vector<Input>& inputs) : inputs_(inputs) {}
  // The table of position `leaf` of streams shaped as `shape`, or nullptr
  // (`why`, when given, then says what did not hold). Built on first use.
  const DealtTable* find(const trace::Stream& shape, size_t leaf, std::string* why = nullptr);

 private:
  struct Site {
    std::unique_ptr<DealtTable> table;
    std::string why;
  };
  const std::vector<Input>& inputs_;
  std::map<SiteKey, Site> sites_;
};

// The site of position `leaf` of s.
SiteKey site_of(const trace::Stream& s, size_t leaf);

// Per leaf of s: the node index of its enclosing loop, -1 at top level, -2
// inside nested loops.
std::vector<int32_t> enclosing_loops(const trace::Stream& s);

}  // namespace mpior::extrap
