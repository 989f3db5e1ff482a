#include "report/timeline_writer.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace mpior::report;

TEST_CASE("the timeline is trace-event JSON with slices, flows and metadata") {
  std::ostringstream out;
  TimelineWriter w(out, 10);
  w.process(1, "rank 0", 0);
  w.thread(1, 1000000, "thread 0");
  CHECK(w.slice({1, 1000000, 1500}, 2500, "write", "io", {{"file", "/a\xff"}, {"bytes", 4}}));
  CHECK(w.slice({1, 1000000, 5000}, 100, "MPI_Send", "mpi", {{"peer", 1}}));
  w.flow({1, 1000000, 5000}, {2, 2000000, 6000}, "message", "message");
  REQUIRE(w.finish({{"tool", "test"}}));
  nlohmann::json doc = nlohmann::json::parse(out.str());
  auto& ev = doc["traceEvents"];
  REQUIRE(ev.size() == 7);
  CHECK(ev[3]["ph"] == "X");
  CHECK(ev[3]["ts"].get<double>() == 1.5);  // microseconds
  CHECK(ev[3]["dur"].get<double>() == 2.5);
  CHECK(ev[3]["args"]["bytes"] == 4);
  CHECK(ev[3]["args"]["file"] == "/a\xef\xbf\xbd");  // invalid UTF-8 replaced, the JSON stays valid
  CHECK(ev[5]["ph"] == "s");
  CHECK(ev[6]["ph"] == "f");
  CHECK(ev[6]["bp"] == "e");
  CHECK(ev[5]["id"] == ev[6]["id"]);
  CHECK(doc["metadata"]["capped"] == false);
  CHECK(doc["metadata"]["slices"] == 2);
  CHECK(doc["metadata"]["flows"] == 1);
  CHECK(doc["metadata"]["tool"] == "test");
}

TEST_CASE("the cap stops slices and says so") {
  std::ostringstream out;
  TimelineWriter w(out, 2);
  CHECK(w.slice({1, 1, 0}, 1, "a", "io", nlohmann::json::object()));
  CHECK(w.slice({1, 1, 2}, 1, "b", "io", nlohmann::json::object()));
  CHECK(w.full());
  CHECK_FALSE(w.slice({1, 1, 4}, 1, "c", "io", nlohmann::json::object()));
  REQUIRE(w.finish(nlohmann::json::object()));
  nlohmann::json doc = nlohmann::json::parse(out.str());
  CHECK(doc["traceEvents"].size() == 2);
  CHECK(doc["metadata"]["capped"] == true);
  CHECK(doc["metadata"]["max_events"] == 2);
}
