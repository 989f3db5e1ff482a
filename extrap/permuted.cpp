#include "extrap/permuted.hpp"

#include <algorithm>
#include <utility>

namespace mpior::extrap {

namespace {

// splitmix64: the same stream on every platform (std::shuffle and the
// standard distributions are implementation-defined, and a plan must not
// change with the compiler).
uint64_t next(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t seed_of(std::span<const int64_t> sorted, int64_t r, int64_t n) {
  uint64_t h = 0x6a09e667f3bcc909ULL;
  auto add = [&h](int64_t v) {
    uint64_t s = h ^ uint64_t(v);
    h = next(s);
  };
  add(r);
  add(n);
  for (int64_t v : sorted) add(v);
  return h;
}

}  // namespace

std::vector<trace::SeqItem> sorted_seq(std::span<const trace::SeqItem> items, int64_t offset) {
  std::vector<int64_t> v = trace::seq_expand(items);
  std::sort(v.begin(), v.end());
  trace::SeqBuilder b;
  for (int64_t x : v) b.append(x + offset);
  return b.items();
}

void shuffle_values(std::vector<int64_t>& v, int64_t r, int64_t n) {
  uint64_t state = seed_of(v, r, n);
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[next(state) % i]);
}

void shuffle_tail(std::vector<trace::SeqItem>& out, size_t base, int64_t r, int64_t n) {
  std::vector<int64_t> v = trace::seq_expand(std::span<const trace::SeqItem>(out).subspan(base));
  shuffle_values(v, r, n);
  out.resize(base);
  for (int64_t x : v) out.push_back(trace::SeqItem{x, 0, 0});
}

std::string not_permutation(std::string_view sorted_refusal) {
  // "<where>, <what>: <reason>:\n    n=... rank ...: values\n  <hint>": keep
  // the reason and the sample lines, not the place (said already) nor the hint.
  std::string_view s = sorted_refusal;
  size_t reason = s.find(": the values ");
  if (reason == std::string_view::npos) reason = s.find(": no model fits");
  if (reason == std::string_view::npos) return "";
  s.remove_prefix(reason + 2);
  for (size_t at = s.find("\n  "); at != std::string_view::npos; at = s.find("\n  ", at + 1))
    if (at + 3 < s.size() && s[at + 3] != ' ') {  // a hint's paragraph, not a sample line
      s = s.substr(0, at);
      break;
    }
  return "\n  Nor are they a permutation of values that fit (their order taken as random): sorted, " + std::string(s);
}

}  // namespace mpior::extrap
