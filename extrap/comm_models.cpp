#include "extrap/comm_models.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace mpior::extrap {

bool CommModel::matches(Kind kind, int64_t k, const CommSample& s, const std::vector<int32_t>& fixed) {
  const std::vector<int32_t>& m = *s.members;
  switch (kind) {
    case kNull:
      return false;
    case kFixed:
      return m == fixed;
    case kSelf:
      return m.size() == 1 && m[0] == s.r;
    case kWorld:
      for (size_t i = 0; i < m.size(); ++i)
        if (m[i] != int32_t(i)) return false;
      return int64_t(m.size()) == s.n;
    case kBlock: {
      if (k < 1) return false;
      int64_t first = s.r / k * k, last = std::min(first + k, s.n);
      if (int64_t(m.size()) != last - first) return false;
      for (size_t i = 0; i < m.size(); ++i)
        if (m[i] != first + int64_t(i)) return false;
      return true;
    }
    case kStrided: {
      if (k < 1) return false;
      int64_t first = s.r % k;
      size_t i = 0;
      for (int64_t v = first; v < s.n; v += k, ++i)
        if (i >= m.size() || m[i] != v) return false;
      return i == m.size();
    }
  }
  return false;
}

std::optional<CommModel> CommModel::fit(const std::vector<CommSample>& samples) {
  CommModel m;
  size_t freed = size_t(std::count_if(samples.begin(), samples.end(), [](const CommSample& s) { return !s.members; }));
  if (freed == samples.size()) return m;
  if (freed) return std::nullopt;
  for (Kind kind : {kWorld, kSelf})
    if (std::all_of(samples.begin(), samples.end(), [&](const CommSample& s) { return matches(kind, 0, s, {}); })) {
      m.kind_ = kind;
      return m;
    }
  for (Kind kind : {kBlock, kStrided}) {
    // Per rank count, the sizes k that explain every sample there.
    std::map<int64_t, std::set<int64_t>> valid;
    for (const CommSample& s : samples) valid[s.n];
    for (auto& [n, ks] : valid)
      for (int64_t k = 1; k <= n; ++k)
        if (std::all_of(samples.begin(), samples.end(),
                        [&](const CommSample& s) { return s.n != n || matches(kind, k, s, {}); }))
          ks.insert(k);
    if (valid.size() < 2) continue;
    int64_t max_n = valid.rbegin()->first;
    m.kind_ = kind;
    for (int64_t k = 1; k <= max_n; ++k)  // k the same at every n
      if (std::all_of(valid.begin(), valid.end(), [&](auto& v) { return v.second.count(k) > 0; })) {
        m.k_ = k;
        return m;
      }
    for (int64_t g = 1; g <= max_n; ++g)  // k = n / g: g groups
      if (std::all_of(valid.begin(), valid.end(),
                      [&](auto& v) { return v.first % g == 0 && v.second.count(v.first / g) > 0; })) {
        m.k_ = g;
        m.per_n_ = true;
        return m;
      }
  }
  const std::vector<int32_t>& first = *samples.front().members;
  if (std::all_of(samples.begin(), samples.end(), [&](const CommSample& s) { return *s.members == first; })) {
    m.kind_ = kFixed;
    m.fixed_ = first;
    return m;
  }
  return std::nullopt;
}

CommInstance CommModel::instance(int64_t r, int64_t n) const {
  switch (kind_) {
    case kWorld:
      return {kWorld, 0, 0};
    case kSelf:
      return {kSelf, 0, r};
    case kBlock:
      return {kBlock, k_at(n), r / std::max<int64_t>(1, k_at(n))};
    case kStrided:
      return {kStrided, k_at(n), r % std::max<int64_t>(1, k_at(n))};
    case kFixed: {
      uint64_t h = 1469598103934665603ull;  // one instance per member list
      for (int32_t m : fixed_) h = (h ^ uint32_t(m)) * 1099511628211ull;
      return {kFixed, int64_t(fixed_.size()), int64_t(h)};
    }
    default:
      return {kind_, 0, 0};
  }
}

std::vector<int32_t> CommModel::members(const CommInstance& c, int64_t n) const {
  std::vector<int32_t> out;
  switch (c.kind) {
    case kWorld:
      for (int64_t r = 0; r < n; ++r) out.push_back(int32_t(r));
      break;
    case kSelf:
      out.push_back(int32_t(c.b));
      break;
    case kBlock:
      for (int64_t r = c.b * c.a; r < std::min(c.b * c.a + c.a, n); ++r) out.push_back(int32_t(r));
      break;
    case kStrided:
      for (int64_t r = c.b; r < n; r += c.a) out.push_back(int32_t(r));
      break;
    case kFixed:
      out = fixed_;
      break;
    default:
      break;
  }
  return out;
}

std::string CommModel::describe() const {
  std::string k = per_n_ ? fmt::format("n/{}", k_) : std::to_string(k_);
  switch (kind_) {
    case kNull:
      return "freed before use";
    case kWorld:
      return "all ranks";
    case kSelf:
      return "the rank alone";
    case kBlock:
      return fmt::format("blocks of {} consecutive ranks (r / {})", k, k);
    case kStrided:
      return fmt::format("every {}-th rank (r mod {})", k, k);
    case kFixed:
      return fmt::format("fixed members [{}]", fmt::join(fixed_, ","));
  }
  return "?";
}

}  // namespace mpior::extrap
