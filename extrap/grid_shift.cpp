#include "extrap/grid_shift.hpp"

#include <fmt/format.h>

#include <array>

namespace mpior::extrap {

namespace {

// A size: fixed (> 0) or n divided by it (< 0).
constexpr std::array<int64_t, 11> kSizes = {1, 2, 3, 4, -2, -3, -4, -5, -6, -7, -8};

struct Shift {
  int64_t stride, size, step;
};

Shift shift_of(int64_t k) {
  int64_t n_sizes = int64_t(kSizes.size());
  return {kSizes[size_t(k / 2 / n_sizes % n_sizes)], kSizes[size_t(k / 2 % n_sizes)], k % 2 ? 1 : -1};
}

// The size at n ranks, or 0 when it does not divide n.
int64_t size_at(int64_t spec, int64_t n) {
  if (spec > 0) return spec;
  return n % -spec == 0 ? n / -spec : 0;
}

std::string size_text(int64_t spec) { return spec > 0 ? std::to_string(spec) : fmt::format("n/{}", -spec); }

}  // namespace

int64_t grid_shift_count() { return 2 * int64_t(kSizes.size() * kSizes.size()); }

int64_t grid_neighbour(int64_t k, int64_t r, int64_t n) {
  Shift s = shift_of(k);
  int64_t b = size_at(s.stride, n), d = size_at(s.size, n);
  if (b < 1 || d < 2 || n % (b * d) != 0 || r < 0 || r >= n) return -1;
  int64_t coord = r / b % d;
  return r + (((coord + s.step) % d + d) % d - coord) * b;
}

std::string grid_shift_text(int64_t k) {
  Shift s = shift_of(k);
  return fmt::format("grid(b={},d={},{:+})", size_text(s.stride), size_text(s.size), s.step);
}

std::vector<int64_t> grid_breaks(int64_t k, int64_t n) {
  Shift s = shift_of(k);
  int64_t b = size_at(s.stride, n);
  std::vector<int64_t> out;
  if (b < 1) return out;
  for (int64_t r = b; r < n; r += b) out.push_back(r);
  return out;
}

}  // namespace mpior::extrap
