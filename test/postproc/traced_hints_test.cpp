#include "postproc/traced_hints.hpp"

#include <catch2/catch.hpp>

using namespace mpior;

namespace {

trace::JobInfo job(std::vector<trace::MpiioHintSet> sets, std::string fcoll = "") {
  trace::JobInfo j;
  j.mpiio_hints = std::move(sets);
  j.ompio_fcoll = std::move(fcoll);
  return j;
}

std::vector<std::pair<std::string, std::string>> taken(const postproc::TracedHints& t) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const postproc::TracedHint& h : t.taken) out.emplace_back(h.key, h.value);
  return out;
}

using P = std::vector<std::pair<std::string, std::string>>;

}  // namespace

TEST_CASE("traced hints stand for the program's choice", "[hints]") {
  // ROMIO's report of a file opened with cb_buffer_size and cb_nodes given.
  trace::MpiioHintSet romio{"/d/f",
                            {{"cb_buffer_size", "1048576", true},
                             {"cb_nodes", "2", true},
                             {"cb_config_list", "*:1", false},
                             {"romio_cb_write", "automatic", false},
                             {"ind_rd_buffer_size", "4194304", false},
                             {"striping_unit", "0", false}}};
  trace::JobInfo a = job({romio});
  REQUIRE(taken(postproc::traced_hints({&a})) == P{{"cb_buffer_size", "1048576"}, {"cb_nodes", "2"}});
  SECTION("cb_nodes the library derived is not taken; another value of a constant default is") {
    romio.hints[1].given = false;
    romio.hints[3].value = "enable";  // a ROMIO_HINTS file
    trace::JobInfo b = job({romio});
    REQUIRE(taken(postproc::traced_hints({&b})) == P{{"cb_buffer_size", "1048576"}, {"romio_cb_write", "enable"}});
  }
  SECTION("hints given other values by two inputs are not taken") {
    romio.hints[0].value = "65536";
    trace::JobInfo b = job({romio});
    postproc::TracedHints t = postproc::traced_hints({&a, &b});
    REQUIRE(taken(t) == P{{"cb_nodes", "2"}});
    REQUIRE(t.differing == std::vector<std::string>{"cb_buffer_size"});
  }
  SECTION("striping_factor only from ROMIO's Lustre driver") {
    trace::MpiioHintSet ufs{"/d/g", {{"striping_factor", "4", true}}};
    trace::MpiioHintSet lustre{"/l/g", {{"striping_factor", "4", false}, {"romio_lustre_co_ratio", "1", false}}};
    trace::JobInfo u = job({ufs}), l = job({lustre});
    REQUIRE(taken(postproc::traced_hints({&u})).empty());
    REQUIRE(taken(postproc::traced_hints({&l})) == P{{"striping_factor", "4"}, {"romio_lustre_co_ratio", "1"}});
  }
}

TEST_CASE("OMPIO's forced component when every input agrees", "[hints]") {
  trace::JobInfo a = job({}, "individual"), b = job({}, "individual"), c = job({});
  REQUIRE(postproc::traced_hints({&a, &b}).fcoll == "individual");
  REQUIRE(postproc::traced_hints({&a, &c}).fcoll.empty());
  REQUIRE(postproc::hint_option("romio_lustre_co_ratio") == "--romio-lustre-co-ratio");
}
