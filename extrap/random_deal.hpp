// Values a program deals to random ranks: IOR -z on one shared file draws,
// with one seed for every rank, which rank moves each transfer of the file,
// so a rank's offsets and their number are random while their union over the
// ranks is the whole file. Such a structure quantity is extrapolated as that
// union, fitted over n, and dealt again at the target: each rank takes the
// mean number of values (the union's size over n) from one pseudo-random
// permutation seeded by the rank count and the values, so positions that take
// the same union (an lseek's offset, the write after it, a later read pass)
// deal it alike. The set over all ranks is exact; which rank gets which value,
// their order and each rank's count are approximated (a warning; --strict
// refuses).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "extrap/stream_classes.hpp"
#include "trace/model.hpp"

namespace mpior::extrap {

// One input's union of a position's field over every rank, whatever its class.
struct RandomUnion {
  int64_t n = 0;
  std::vector<trace::SeqItem> sorted;  // the union, ascending, folded
  int64_t per_rank = 0;                // its size over n
};

// Per input: the union of field f (an argument slot, kRetField or
// kErrField) of position `leaf` of `shape`; nullopt, with why, when some
// rank lacks the position or the union's size is not a multiple of n.
std::optional<std::vector<RandomUnion>> random_unions(const std::vector<Input>& inputs, const trace::Stream& shape,
                                                      size_t leaf, int f, std::string* why);

// The union `all` at n ranks in the order every rank's share is cut from:
// rank r takes [r * per_rank, (r + 1) * per_rank).
std::vector<int64_t> random_deal_order(std::span<const trace::SeqItem> all, int64_t n);

// Starts the part of a refusal that says why the values are not dealt at random.
inline constexpr const char* kNotRandomDeal = "\n  Nor are they values dealt to random ranks";

// That part of a refusal `what`, or "" when it has none.
std::string not_random_deal(std::string_view what);

}  // namespace mpior::extrap
