// Which node each rank of an extrapolated plan runs on, continuing the
// placement of the traced counts: ROMIO's aggregator choice (cb_config_list
// *:1, named hosts) follows the ranks' nodes, so a larger count must fill
// nodes the way the traced runs did. The patterns are the ones launchers
// make: blocks of a fixed number of ranks a node (mpirun's default: fill a
// node, then the next; the node count grows), a fixed set of nodes split
// into even blocks (the first nodes take one more), or ranks dealt
// round-robin over a fixed set of nodes. Nodes are compared by the order in
// which ranks first appear on them, not by name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mpior::postproc {

struct Placement {
  enum class Kind {
    one_host,     // every traced rank on one host (the placement is not known: kept on it)
    per_node,     // rank r on node r / size
    even_blocks,  // `size` nodes, each a block of n / size ranks, the first n % size one more
    cyclic,       // rank r on node r % size
    unknown,      // none fits every traced count: rank r on the largest count's rank r % n's node
  };
  Kind kind = Kind::unknown;
  int64_t size = 0;  // ranks a node (per_node) or nodes (even_blocks, cyclic)
};

// hosts[i][r]: the host of rank r in the i-th traced run, any order of runs.
Placement find_placement(const std::vector<std::vector<std::string>>& hosts);

// The host of each of n ranks: the largest traced run's nodes in the order
// its ranks first appear on them, then new nodes named after them (node7
// after node6, else HOST+1, HOST+2, ... after the last traced host).
std::vector<std::string> place_ranks(const Placement& p, const std::vector<std::vector<std::string>>& hosts, int64_t n);

const char* placement_name(Placement::Kind k);

}  // namespace mpior::postproc
