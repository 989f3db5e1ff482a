#include <unistd.h>

#include <catch2/catch.hpp>

#include "replayer/bind.hpp"
#include "test/replayer/plan_maker.hpp"

using namespace mpior;
using namespace mpior::replay;

namespace {

std::vector<int> own_cpus() {
  cpu_set_t set;
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

std::vector<int> cpus_of(const cpu_set_t& set) {
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

trace::Plan plan_of(int32_t ranks, trace::CpuPlacement placement) {
  testing::PlanMaker pm(ranks);
  for (trace::PlanRank& r : pm.plan.ranks) r.placement = placement;
  return pm.plan;
}

}  // namespace

TEST_CASE("--bind parses its three modes and nothing else", "[replay][placement]") {
  BindMode m = BindMode::none;
  CHECK(parse_bind_mode("auto", m));
  CHECK(m == BindMode::as_traced);
  CHECK(parse_bind_mode("core", m));
  CHECK(m == BindMode::core);
  CHECK(parse_bind_mode("none", m));
  CHECK(m == BindMode::none);
  CHECK_FALSE(parse_bind_mode("socket", m));
  CHECK_FALSE(parse_bind_mode("", m));
}

TEST_CASE("threads run where the traced ranks ran: bound ranks on blocks of their own", "[replay][placement]") {
  const std::vector<int> cpus = own_cpus();
  const int online = int(cpus.size()) + 1;  // the traced node had more CPUs than each rank's mask
  SECTION("bound traced ranks, one CPU each; a rank's two threads share its CPU") {
    trace::Plan plan = plan_of(2, {1, online});
    ThreadPlacement p = place_threads(plan, {0, 0, 1}, BindMode::as_traced, false);
    if (cpus.size() < 2) {
      CHECK_FALSE(p.bound());
      CHECK(p.text.find("would need 2 CPUs") != std::string::npos);
      return;
    }
    REQUIRE(p.bound());
    REQUIRE(p.sets.size() == 3);
    CHECK(cpus_of(p.sets[0]) == std::vector<int>{cpus[0]});
    CHECK(cpus_of(p.sets[1]) == std::vector<int>{cpus[0]});
    CHECK(cpus_of(p.sets[2]) == std::vector<int>{cpus[1]});
    CHECK(p.text.find("2 of 2 ranks bound, as traced") != std::string::npos);
  }
  SECTION("unbound traced ranks stay unbound; --bind core binds them anyway") {
    trace::Plan plan = plan_of(2, {online, online});
    ThreadPlacement p = place_threads(plan, {0, 1}, BindMode::as_traced, false);
    CHECK_FALSE(p.bound());
    CHECK(p.text == "unbound, as the traced ranks ran");
    ThreadPlacement core = place_threads(plan, {0, 1}, BindMode::core, false);
    CHECK(core.bound() == (cpus.size() >= 2));
  }
  SECTION("a trace that does not say, and --bind none") {
    trace::Plan plan = plan_of(2, {});
    CHECK(place_threads(plan, {0, 1}, BindMode::as_traced, false).text.find("does not say") != std::string::npos);
    trace::Plan bound = plan_of(2, {1, online});
    ThreadPlacement none = place_threads(bound, {0, 1}, BindMode::none, false);
    CHECK_FALSE(none.bound());
    CHECK(none.text == "unbound (--bind none)");
  }
  SECTION("more CPUs than this process may use: unbound, said why") {
    trace::Plan plan = plan_of(int32_t(cpus.size()) + 1, {1, online + 8});
    std::vector<int32_t> ranks;
    for (int32_t r = 0; r <= int32_t(cpus.size()); ++r) ranks.push_back(r);
    ThreadPlacement p = place_threads(plan, ranks, BindMode::as_traced, false);
    CHECK_FALSE(p.bound());
    CHECK(p.text.find("this replay may use " + std::to_string(cpus.size())) != std::string::npos);
  }
  SECTION("mixed: bound ranks take blocks, an unbound one keeps every CPU") {
    if (cpus.size() < 2) return;
    trace::Plan plan = plan_of(2, {1, online});
    plan.ranks[1].placement = {online, online};
    ThreadPlacement p = place_threads(plan, {0, 1}, BindMode::as_traced, false);
    REQUIRE(p.bound());
    CHECK(cpus_of(p.sets[0]) == std::vector<int>{cpus[0]});
    CHECK(cpus_of(p.sets[1]) == cpus);
    CHECK(p.text.find("1 of 2 ranks bound") != std::string::npos);
  }
}

TEST_CASE("an MPI process the launcher left unbound binds nothing", "[replay][placement]") {
  const std::vector<int> cpus = own_cpus();
  if (long(cpus.size()) < sysconf(_SC_NPROCESSORS_ONLN)) return;  // this test process runs bound itself
  trace::Plan plan = plan_of(1, {1, int(cpus.size()) + 1});
  ThreadPlacement p = place_threads(plan, {0}, BindMode::as_traced, true);
  CHECK_FALSE(p.bound());
  CHECK(p.text.find("-bind-to core") != std::string::npos);
}
