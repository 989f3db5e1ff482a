#include "postproc/comms.hpp"

#include <catch2/catch.hpp>

#include "test/postproc/fixture.hpp"
#include "trace/tool_error.hpp"

using namespace mpior;
using namespace mpior::test;
using Catch::Matchers::Contains;
using trace::CommOrigin;

namespace {

// Four ranks: a dup of world; a split into even and odd ranks; a create of
// ranks {0,1,2}; a cart (reordered) on the dup and its rows.
std::vector<RankBuilder> derived_comms() {
  std::vector<RankBuilder> ranks;
  for (int32_t r = 0; r < 4; ++r) ranks.emplace_back(r, 4);
  for (int32_t r = 0; r < 4; ++r) {
    RankBuilder& b = ranks[size_t(r)];
    int32_t dup = b.comm(CommOrigin::dup, 0, 0, {0, 1, 2, 3});
    b.comm(CommOrigin::split, 0, 1, r % 2 == 0 ? std::vector<int32_t>{0, 2} : std::vector<int32_t>{1, 3});
    if (r != 3) b.comm(CommOrigin::create, 0, 2, {0, 1, 2});
    int32_t cart = b.comm(CommOrigin::cart, dup, 0, {1, 0, 3, 2});
    b.comm(CommOrigin::cart_sub, cart, 0, r <= 1 ? std::vector<int32_t>{1, 0} : std::vector<int32_t>{3, 2});
  }
  return ranks;
}

postproc::TraceSet set_of(std::vector<RankBuilder>& ranks) {
  std::vector<trace::RankTrace> traces;
  for (RankBuilder& b : ranks) traces.push_back(b.finish());
  return make_set(std::move(traces));
}

// The global id every rank gives the communicator it calls `local`.
int32_t global(const postproc::CommResolution& c, int32_t rank, int32_t local) {
  return c.local_to_global[size_t(rank)][size_t(local)];
}

}  // namespace

TEST_CASE("world is 0 and every MPI_COMM_SELF gets its own id", "[postproc][comms]") {
  auto ranks = derived_comms();
  auto set = set_of(ranks);
  auto c = postproc::resolve_comms(set);
  REQUIRE(c.comms[0].members == std::vector<int32_t>{0, 1, 2, 3});
  std::vector<int32_t> selves;
  for (int32_t r = 0; r < 4; ++r) {
    REQUIRE(global(c, r, 0) == 0);
    int32_t self = global(c, r, 1);
    REQUIRE(c.comms[size_t(self)].members == std::vector<int32_t>{r});
    REQUIRE(std::find(selves.begin(), selves.end(), self) == selves.end());
    selves.push_back(self);
  }
}

TEST_CASE("dup, split, create, cart and cart_sub get one id on all their members", "[postproc][comms]") {
  auto ranks = derived_comms();
  auto set = set_of(ranks);
  auto c = postproc::resolve_comms(set);
  // dup: local id 2 everywhere
  int32_t dup = global(c, 0, 2);
  for (int32_t r = 1; r < 4; ++r) REQUIRE(global(c, r, 2) == dup);
  REQUIRE(c.comms[size_t(dup)].members == std::vector<int32_t>{0, 1, 2, 3});
  REQUIRE(c.comms[size_t(dup)].parent == 0);
  // split: one communicator per colour
  int32_t even = global(c, 0, 3), odd = global(c, 1, 3);
  REQUIRE(even != odd);
  REQUIRE(global(c, 2, 3) == even);
  REQUIRE(global(c, 3, 3) == odd);
  REQUIRE(c.comms[size_t(even)].members == std::vector<int32_t>{0, 2});
  REQUIRE(c.comms[size_t(odd)].members == std::vector<int32_t>{1, 3});
  // create: rank 3 got MPI_COMM_NULL, so its cart is local id 4, not 5
  int32_t created = global(c, 0, 4);
  REQUIRE(global(c, 1, 4) == created);
  REQUIRE(global(c, 2, 4) == created);
  REQUIRE(c.comms[size_t(created)].members == std::vector<int32_t>{0, 1, 2});
  int32_t cart = global(c, 0, 5);
  REQUIRE(global(c, 3, 4) == cart);
  REQUIRE(c.comms[size_t(cart)].members == std::vector<int32_t>{1, 0, 3, 2});
  REQUIRE(c.comms[size_t(cart)].parent == dup);
  int32_t row01 = global(c, 0, 6), row23 = global(c, 2, 6);
  REQUIRE(global(c, 1, 6) == row01);
  REQUIRE(global(c, 3, 5) == row23);
  REQUIRE(c.comms[size_t(row01)].members == std::vector<int32_t>{1, 0});
  REQUIRE(c.comms[size_t(row23)].members == std::vector<int32_t>{3, 2});
  // positions: rank 1 is rank 0 of the cart
  REQUIRE(c.local_position[1][5] == 0);
  REQUIRE(c.local_position[3][4] == 2);
  REQUIRE(c.plan_comms().size() == c.comms.size());
}

TEST_CASE("untraced communicators match by members and order of first appearance", "[postproc][comms]") {
  std::vector<RankBuilder> ranks;
  for (int32_t r = 0; r < 3; ++r) ranks.emplace_back(r, 3);
  for (int32_t r = 0; r < 2; ++r) {
    ranks[size_t(r)].comm(CommOrigin::unknown, -1, 0, {0, 1});
    ranks[size_t(r)].comm(CommOrigin::unknown, -1, 0, {0, 1});
  }
  ranks[2].comm(CommOrigin::unknown, -1, 0, {2});
  auto set = set_of(ranks);
  auto c = postproc::resolve_comms(set);
  REQUIRE(global(c, 0, 2) == global(c, 1, 2));
  REQUIRE(global(c, 0, 3) == global(c, 1, 3));
  REQUIRE(global(c, 0, 2) != global(c, 0, 3));
  REQUIRE(c.comms[size_t(global(c, 2, 2))].members == std::vector<int32_t>{2});
}

TEST_CASE("mismatched communicator creations are rejected naming both ranks", "[postproc][comms]") {
  SECTION("a member made it from a different collective") {
    auto ranks = derived_comms();
    ranks[2].trace().comms[3].parent_seq = 2;
    auto set = set_of(ranks);
    REQUIRE_THROWS_WITH(postproc::resolve_comms(set),
                        Contains("communicators disagree") && Contains("rank 0 (<memory rank 0>)") &&
                            Contains("member rank 2 (<memory rank 2>)") && Contains("MPI_Comm_split"));
  }
  SECTION("a member lists the members in another order") {
    auto ranks = derived_comms();
    ranks[2].trace().comms[3].members = {2, 0};
    auto set = set_of(ranks);
    REQUIRE_THROWS_WITH(postproc::resolve_comms(set),
                        Contains("rank 0") && Contains("rank 2") && Contains("members [2, 0]"));
  }
  SECTION("members made it with different calls") {
    auto ranks = derived_comms();
    ranks[1].trace().comms[2].origin = CommOrigin::split;
    auto set = set_of(ranks);
    REQUIRE_THROWS_WITH(postproc::resolve_comms(set), Contains("rank 0") && Contains("MPI_Comm_dup") &&
                                                          Contains("rank 1") && Contains("MPI_Comm_split"));
  }
  SECTION("a member never made it") {
    auto ranks = derived_comms();
    auto& comms = ranks[3].trace().comms;
    comms.erase(comms.begin() + 2, comms.end());  // rank 3 stops after its split
    auto set = set_of(ranks);
    REQUIRE_THROWS_WITH(postproc::resolve_comms(set),
                        Contains("rank 0") && Contains("member rank 3") && Contains("no such communicator"));
  }
  SECTION("a parent the table does not define") {
    auto ranks = derived_comms();
    ranks[1].trace().comms[2].parent = 9;
    auto set = set_of(ranks);
    REQUIRE_THROWS_WITH(postproc::resolve_comms(set),
                        Contains("<memory rank 1>: communicator 2") && Contains("parent communicator 9"));
  }
  SECTION("an entry that does not list its own rank") {
    auto ranks = derived_comms();
    ranks[0].trace().comms[3].members = {1, 3};
    auto set = set_of(ranks);
    REQUIRE_THROWS_WITH(postproc::resolve_comms(set),
                        Contains("<memory rank 0>: communicator 3") && Contains("does not list its own rank"));
  }
  SECTION("a member outside the parent") {
    auto ranks = derived_comms();
    for (int32_t r : {0, 2}) ranks[size_t(r)].comm(CommOrigin::dup, 3, 0, {0, 2});  // dup of the even split: fine
    ranks[0].trace().comms.back().members = {0, 1};
    ranks[1].comm(CommOrigin::dup, 3, 0, {0, 1});
    auto set = set_of(ranks);
    REQUIRE_THROWS_WITH(postproc::resolve_comms(set), Contains("has member 1, who is not in its parent"));
  }
}

TEST_CASE("communicators made over groups and intercommunicators resolve by their members", "[postproc][comms]") {
  // ranks 0,2 and 1,3 make an intercommunicator (members: the group holding
  // rank 0 first); rank 1 and 3 also make a communicator over their group
  std::vector<RankBuilder> ranks;
  for (int32_t r = 0; r < 4; ++r) ranks.emplace_back(r, 4);
  for (int32_t r = 0; r < 4; ++r) ranks[size_t(r)].comm(CommOrigin::intercomm, -1, 0, {0, 2, 1, 3});
  for (int32_t r : {1, 3}) ranks[size_t(r)].comm(CommOrigin::group, -1, 0, {1, 3});
  for (int32_t r = 0; r < 4; ++r) ranks[size_t(r)].comm(CommOrigin::merge, 2, 0, {0, 2, 1, 3});
  std::vector<trace::RankTrace> traces;
  for (RankBuilder& b : ranks) traces.push_back(b.finish());
  auto set = make_set(std::move(traces));
  auto res = postproc::resolve_comms(set);
  REQUIRE(res.local_to_global[0][2] == res.local_to_global[1][2]);  // one intercommunicator
  REQUIRE(res.local_to_global[1][3] == res.local_to_global[3][3]);  // one group communicator
  REQUIRE(res.local_to_global[0][3] == res.local_to_global[1][4]);  // one merge, made from the intercommunicator
  REQUIRE(res.comms[size_t(res.local_to_global[2][2])].members == std::vector<int32_t>{0, 2, 1, 3});
}
