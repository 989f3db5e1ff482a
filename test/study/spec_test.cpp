#include "study/spec.hpp"

#include <catch2/catch.hpp>

#include "study/runner.hpp"

using namespace mpior::study;

TEST_CASE("rank lists parse sorted and unique; bad ones are refused") {
  CHECK(parse_ranks("16,4,8,4") == std::vector<int>{4, 8, 16});
  CHECK(parse_ranks("8192") == std::vector<int>{8192});
  for (const char* bad : {"", "4,", "4,x", "0", "-4", "4K", "1,2.5", "99999999999"})
    CHECK_THROWS_AS(parse_ranks(bad), mpior::ToolError);
}

TEST_CASE("targets, settings and results parse; bad ones are refused") {
  Target t = parse_target("A=/mnt/a=b");
  CHECK(t.name == "A");
  CHECK(t.dir == "/mnt/a=b");
  for (const char* bad : {"A", "=/x", "A=", "a b=/x"}) CHECK_THROWS_AS(parse_target(bad), mpior::ToolError);
  Setting s = parse_setting("cb_buffer_size=4K", 1);
  CHECK(s.name == "set1");
  CHECK(s.cb_buffer_size == 4096);
  CHECK(parse_setting("cb_buffer_size=16M", 2).cb_buffer_size == 16 << 20);
  Setting both = parse_setting("cb_buffer_size=1M,cb_nodes=4", 3);
  CHECK(both.cb_buffer_size == 1 << 20);
  CHECK(both.cb_nodes == 4);
  CHECK(both.hint_args() == std::vector<std::string>{"--hint", "cb_buffer_size=1048576", "--hint", "cb_nodes=4",
                                                     "--hint", "cb_config_list=*:*"});
  CHECK(s.hint_args() == std::vector<std::string>{"--hint", "cb_buffer_size=4096"});
  CHECK(Setting{}.hint_args().empty());
  for (const char* bad : {"cb_nodes=0", "cb_nodes=", "cb_nodes=2K", "cb_nodes=-1", "cb_nodes=1.5"})
    CHECK_THROWS_WITH(parse_setting(bad, 1), Catch::Contains("cb_nodes needs a whole number of aggregators"));
  CHECK_THROWS_WITH(parse_setting("romio_cb_write=enable", 1),
                    Catch::Contains("romio_cb_* need cb_nodes in the same setting"));
  CHECK_THROWS_WITH(parse_setting("cb_nodes=2,romio_cb_write=sometimes", 1),
                    Catch::Contains("romio_cb_write takes automatic, enable or disable"));
  CHECK_THROWS_WITH(parse_setting("cb_nodes=2,romio_no_indep_rw=true", 1), Catch::Contains("unsupported hint"));
  // Data sieving acts on independent calls: no cb_nodes needed.
  Setting sieve = parse_setting(
      "romio_ds_write=disable,romio_ds_read=enable,ind_rd_buffer_size=64K,"
      "ind_wr_buffer_size=1M",
      6);
  CHECK(sieve.hint_args() == std::vector<std::string>{"--hint", "romio_ds_read=enable", "--hint",
                                                      "romio_ds_write=disable", "--hint", "ind_rd_buffer_size=65536",
                                                      "--hint", "ind_wr_buffer_size=1048576"});
  CHECK_THROWS_WITH(parse_setting("romio_ds_read=sometimes", 1), Catch::Contains("romio_ds_read takes automatic"));
  CHECK_THROWS_WITH(parse_setting("ind_wr_buffer_size=0", 1), Catch::Contains("ind_wr_buffer_size needs a size"));
  Setting romio =
      parse_setting("cb_nodes=3,cb_config_list=n1:1,n0:2,romio_cb_write=disable,romio_min_fdomain_size=1M", 5);
  CHECK(romio.cb_config_list == "n1:1,n0:2");
  CHECK(romio.min_fdomain_size == 1 << 20);
  CHECK(romio.hint_args() == std::vector<std::string>{"--hint", "cb_nodes=3", "--hint", "cb_config_list=n1:1,n0:2",
                                                      "--hint", "romio_min_fdomain_size=1048576", "--hint",
                                                      "romio_cb_write=disable"});
  CHECK_THROWS_AS(parse_setting("cb_buffer_size=0", 1), mpior::ToolError);
  CHECK_THROWS_AS(parse_setting("cb_buffer_size=1X", 1), mpior::ToolError);
  CHECK_THROWS_AS(parse_setting("bogus=1", 1), mpior::ToolError);
  Setting striped = parse_setting("cb_nodes=2,striping_unit=1M", 4);
  CHECK(striped.striping_unit == 1 << 20);
  CHECK(striped.hint_args() == std::vector<std::string>{"--hint", "cb_nodes=2", "--hint", "cb_config_list=*:*",
                                                        "--hint", "striping_unit=1048576"});
  CHECK_THROWS_WITH(
      parse_setting("striping_unit=1M", 1),
      Catch::Contains("striping_unit, cb_config_list, romio_min_fdomain_size and romio_cb_* need cb_nodes"));
  CHECK_THROWS_WITH(parse_setting("cb_nodes=2,striping_unit=0", 1), Catch::Contains("striping_unit needs a size"));
  Setting lustre = parse_setting("cb_nodes=4,striping_unit=1M,striping_factor=2", 5);
  CHECK(lustre.striping_factor == 2);
  CHECK(lustre.hint_args() == std::vector<std::string>{"--hint", "cb_nodes=4", "--hint", "cb_config_list=*:*", "--hint",
                                                       "striping_unit=1048576", "--hint", "striping_factor=2"});
  CHECK_THROWS_WITH(parse_setting("cb_nodes=2,striping_factor=2", 1),
                    Catch::Contains("striping_factor needs striping_unit"));
  Setting lustre_hints = parse_setting(
      "cb_nodes=4,striping_unit=1M,striping_factor=2,romio_lustre_co_ratio=2,romio_lustre_coll_threshold=64K,"
      "romio_lustre_ds_in_coll=disable",
      6);
  CHECK(lustre_hints.hint_args() == std::vector<std::string>{"--hint", "cb_nodes=4", "--hint", "cb_config_list=*:*",
                                                             "--hint", "striping_unit=1048576", "--hint",
                                                             "striping_factor=2", "--hint", "romio_lustre_co_ratio=2",
                                                             "--hint", "romio_lustre_coll_threshold=65536", "--hint",
                                                             "romio_lustre_ds_in_coll=disable"});
  // The plan's mpior-post line carries them too.
  std::vector<std::string> post = post_hint_args(lustre_hints);
  CHECK(std::vector<std::string>(post.end() - 6, post.end()) ==
        std::vector<std::string>{"--romio-lustre-co-ratio", "2", "--romio-lustre-coll-threshold", "65536",
                                 "--romio-lustre-ds-in-coll", "disable"});
  CHECK_THROWS_WITH(parse_setting("cb_nodes=2,striping_unit=1M,romio_lustre_co_ratio=2", 1),
                    Catch::Contains("romio_lustre_* need striping_factor"));
  CHECK_THROWS_WITH(parse_setting("cb_nodes=2,striping_unit=1M,striping_factor=2,romio_lustre_ds_in_coll=on", 1),
                    Catch::Contains("romio_lustre_ds_in_coll takes automatic"));
  CHECK_THROWS_WITH(parse_setting("cb_nodes=2,striping_unit=1M,striping_factor=2,romio_lustre_coll_threshold=4G", 1),
                    Catch::Contains("an int hint"));
  for (const char* bad :
       {"cb_nodes=2,striping_unit=1M,striping_factor=0", "cb_nodes=2,striping_unit=1M,striping_factor=x",
        "cb_nodes=2,striping_unit=1M,striping_factor=1K"})
    CHECK_THROWS_WITH(parse_setting(bad, 1), Catch::Contains("striping_factor needs a whole number"));
  ResultFile r = parse_result("8192:A=out/r.json");
  CHECK(r.ranks == 8192);
  CHECK(r.target == "A");
  CHECK(r.path == "out/r.json");
  for (const char* bad : {"8192A=r.json", "x:A=r.json", "8:A=", "0:A=r.json"})
    CHECK_THROWS_AS(parse_result(bad), mpior::ToolError);
}

TEST_CASE("the work: traced counts marked and all trust-checked, what-ifs only extrapolated, big counts to MPI") {
  Setting what_if = parse_setting("cb_buffer_size=1M", 1);
  Work w = make_work({16, 2, 4}, {2, 3, 4}, {{"A", "/a"}, {"B", "/b"}}, {Setting{}, what_if}, 8);
  CHECK(w.ranks == std::vector<int>{2, 4, 16});
  CHECK(w.trust.size() == 3);
  // base: 3 counts x 2 targets; set1: only 16 x 2.
  REQUIRE(w.points.size() == 8);
  int traced = 0, mpi = 0;
  for (const Point& p : w.points) {
    traced += p.traced;
    mpi += p.mpi;
    if (p.setting == "set1") CHECK(p.ranks == 16);
  }
  CHECK(traced == 4);
  CHECK(mpi == 4);
  CHECK(w.points.front().id() == "base-n2-A");
  CHECK(plan_name(what_if, 16) == "n16-set1");
  CHECK(plan_name(Setting{}, 16) == "n16");
}

TEST_CASE("a cb_nodes what-if: threads up to --max-threads, MPI lines above, a plan of its own") {
  Setting nodes = parse_setting("cb_nodes=2", 1);
  Work w = make_work({4, 8, 16}, {2, 3, 4}, {{"A", "/a"}}, {Setting{}, nodes}, 8);
  REQUIRE(w.points.size() == 5);  // base at 4, 8 and 16; the what-if at 8 and 16
  for (const Point& p : w.points) CHECK(p.mpi == (p.ranks > 8));
  CHECK(plan_name(nodes, 8) == "n8-set1");
}
