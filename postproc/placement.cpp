#include "postproc/placement.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace mpior::postproc {

namespace {

using Kind = Placement::Kind;

// Rank r's node as the order in which the ranks first appear on it.
std::vector<int64_t> node_indices(const std::vector<std::string>& hosts) {
  std::map<std::string, int64_t> index;
  std::vector<int64_t> out;
  for (const std::string& h : hosts) out.push_back(index.try_emplace(h, int64_t(index.size())).first->second);
  return out;
}

int64_t node_of(const Placement& p, int64_t r, int64_t n) {
  switch (p.kind) {
    case Kind::per_node:
      return r / p.size;
    case Kind::cyclic:
      return r % p.size;
    case Kind::even_blocks: {
      int64_t small = n / p.size, big = small + 1, bigs = n % p.size;
      return r < bigs * big ? r / big : bigs + (r - bigs * big) / std::max<int64_t>(small, 1);
    }
    default:
      return 0;
  }
}

bool fits(const Placement& p, const std::vector<std::vector<int64_t>>& runs) {
  for (const std::vector<int64_t>& nodes : runs)
    for (size_t r = 0; r < nodes.size(); ++r)
      if (node_of(p, int64_t(r), int64_t(nodes.size())) != nodes[r]) return false;
  return true;
}

// A name for a node the traced runs did not have: the last traced host's
// trailing number counted on ("node7" -> "node8"), else HOST+k; never a
// name already taken. `k` moves past the names made.
std::string next_host(const std::string& last, int64_t& k, const std::set<std::string>& taken) {
  size_t digits = last.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(last[digits - 1]))) --digits;
  bool numbered = digits < last.size() && last.size() - digits < 18;
  for (;; ++k) {
    std::string name = numbered ? last.substr(0, digits) + std::to_string(std::stoll(last.substr(digits)) + k)
                                : last + "+" + std::to_string(k);
    if (!taken.contains(name)) return name;
  }
}

}  // namespace

const char* placement_name(Kind k) {
  switch (k) {
    case Kind::one_host:
      return "one host";
    case Kind::per_node:
      return "blocks of ranks a node";
    case Kind::even_blocks:
      return "even blocks over a fixed set of nodes";
    case Kind::cyclic:
      return "round-robin over a fixed set of nodes";
    default:
      return "not recognised";
  }
}

Placement find_placement(const std::vector<std::vector<std::string>>& hosts) {
  std::vector<std::vector<int64_t>> runs;
  int64_t nodes = 0, first_node = 0, largest = -1;
  for (const std::vector<std::string>& h : hosts) {
    runs.push_back(node_indices(h));
    if (runs.back().empty() || int64_t(h.size()) <= largest) continue;
    largest = int64_t(h.size());
    nodes = *std::max_element(runs.back().begin(), runs.back().end()) + 1;
    first_node = std::count(runs.back().begin(), runs.back().end(), 0);
  }
  if (largest < 0 || nodes == 1) return {Kind::one_host, 1};
  // Ranks a node first: with a fixed node count the counts that fill whole
  // nodes look the same, and only this one grows with the ranks.
  for (Placement p :
       {Placement{Kind::per_node, first_node}, Placement{Kind::even_blocks, nodes}, Placement{Kind::cyclic, nodes}})
    if (fits(p, runs)) return p;
  return {Kind::unknown, 0};
}

std::vector<std::string> place_ranks(const Placement& p, const std::vector<std::vector<std::string>>& hosts,
                                     int64_t n) {
  const std::vector<std::string>* largest = nullptr;
  for (const std::vector<std::string>& h : hosts)
    if (!largest || h.size() > largest->size()) largest = &h;
  std::vector<std::string> out;
  if (!largest || largest->empty()) return std::vector<std::string>(size_t(n));
  if (p.kind == Kind::one_host || p.kind == Kind::unknown) {
    for (int64_t r = 0; r < n; ++r)
      out.push_back((*largest)[p.kind == Kind::one_host ? 0 : size_t(r) % largest->size()]);
    return out;
  }
  std::vector<std::string> names;  // node index -> host
  std::set<std::string> taken(largest->begin(), largest->end());
  for (const std::string& h : *largest)
    if (std::find(names.begin(), names.end(), h) == names.end()) names.push_back(h);
  std::string last = names.back();
  int64_t k = 1;
  for (int64_t r = 0; r < n; ++r) {
    auto node = size_t(node_of(p, r, n));
    while (names.size() <= node) names.push_back(next_host(last, k, taken)), taken.insert(names.back());
    out.push_back(names[node]);
  }
  return out;
}

}  // namespace mpior::postproc
