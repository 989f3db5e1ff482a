#include "postproc/placement.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using mpior::postproc::find_placement;
using mpior::postproc::place_ranks;
using mpior::postproc::Placement;
using Kind = Placement::Kind;
using Hosts = std::vector<std::string>;

TEST_CASE("block placement: a node filled, then the next, continued with new nodes", "[postproc][placement]") {
  // Two ranks a node at 2, 4 and 6 ranks (mpirun's default with 2 slots a node).
  std::vector<Hosts> traced{
      {"node0", "node0"}, {"node0", "node0", "node1", "node1"}, {"node0", "node0", "node1", "node1", "node2", "node2"}};
  Placement p = find_placement(traced);
  CHECK(p.kind == Kind::per_node);
  CHECK(p.size == 2);
  // r % n would put ranks 6 and 7 back on node0; blocks go on to node3.
  CHECK(place_ranks(p, traced, 8) == Hosts{"node0", "node0", "node1", "node1", "node2", "node2", "node3", "node3"});
  // Names without a number: HOST+k after the last traced one.
  std::vector<Hosts> named{{"a", "a", "b"}, {"a", "a", "b", "b"}, {"a", "a"}};
  CHECK(place_ranks(find_placement(named), named, 6) == Hosts{"a", "a", "b", "b", "b+1", "b+1"});
}

TEST_CASE("a fixed set of nodes: even blocks or round-robin", "[postproc][placement]") {
  // Two nodes, split in halves, the first taking one more (aggregators_ nodes).
  std::vector<Hosts> halves{{"n0", "n1"}, {"n0", "n0", "n1"}, {"n0", "n0", "n1", "n1"}};
  Placement p = find_placement(halves);
  CHECK(p.kind == Kind::even_blocks);
  CHECK(p.size == 2);
  CHECK(place_ranks(p, halves, 7) == Hosts{"n0", "n0", "n0", "n0", "n1", "n1", "n1"});
  std::vector<Hosts> dealt{{"x", "y", "z"}, {"x", "y", "z", "x"}, {"x", "y", "z", "x", "y"}};
  p = find_placement(dealt);
  CHECK(p.kind == Kind::cyclic);
  CHECK(place_ranks(p, dealt, 7) == Hosts{"x", "y", "z", "x", "y", "z", "x"});
}

TEST_CASE("one host, or no pattern: as the largest traced run", "[postproc][placement]") {
  std::vector<Hosts> one{{"h", "h"}, {"h", "h", "h"}};
  CHECK(find_placement(one).kind == Kind::one_host);
  CHECK(place_ranks(find_placement(one), one, 4) == Hosts{"h", "h", "h", "h"});
  std::vector<Hosts> odd{{"a", "b"}, {"b", "a", "a"}, {"a", "b", "b", "a"}};
  Placement p = find_placement(odd);
  CHECK(p.kind == Kind::unknown);
  CHECK(place_ranks(p, odd, 6) == Hosts{"a", "b", "b", "a", "a", "b"});
}
