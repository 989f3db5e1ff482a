// Communicators at another rank count: a rank's communicator (one entry of
// its table) is modelled by who its members are — none (freed), the world,
// the rank alone, a block of k consecutive ranks (Comm_split(r / k), a
// cartesian row), every k-th rank (Comm_split(r mod k), a column), or a fixed
// list — with k constant or n / g. A model names each instance (world, block
// 3 of k = 4), so ranks in one communicator find each other without ever
// building member lists per rank.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mpior::extrap {

struct CommSample {
  int64_t r = 0, n = 0;
  const std::vector<int32_t>* members = nullptr;  // nullptr: freed before use (-1)
};

struct CommInstance {
  int kind = 0;   // the model
  int64_t a = 0;  // block/stride size k at n
  int64_t b = 0;  // which group (block index, residue, or the rank for self)
  auto operator<=>(const CommInstance&) const = default;
};

class CommModel {
 public:
  static std::optional<CommModel> fit(const std::vector<CommSample>& samples);
  bool null() const { return kind_ == kNull; }
  // The instance rank r of n ranks is in (call only when !null()).
  CommInstance instance(int64_t r, int64_t n) const;
  std::vector<int32_t> members(const CommInstance& c, int64_t n) const;
  std::string describe() const;

 private:
  enum Kind { kNull, kWorld, kSelf, kBlock, kStrided, kFixed };
  static bool matches(Kind kind, int64_t k, const CommSample& s, const std::vector<int32_t>& fixed);
  int64_t k_at(int64_t n) const { return per_n_ ? n / k_ : k_; }
  Kind kind_ = kNull;
  int64_t k_ = 0;  // k, or g when per_n_ (k = n / g)
  bool per_n_ = false;
  std::vector<int32_t> fixed_;
};

}  // namespace mpior::extrap
