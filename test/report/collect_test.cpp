#include "report/collect.hpp"

#include <catch2/catch.hpp>

#include "trace/event.hpp"
#include "trace/kind.hpp"

using namespace mpior;
using namespace mpior::report;

namespace {

trace::Event write_event(int64_t file, int64_t bytes, const char* kind = "write") {
  trace::Event ev;
  ev.kind = *trace::kind_from_name(kind);
  ev.args[trace::arg::handle] = 3;
  ev.args[trace::arg::file] = file;
  ev.args[trace::arg::offset] = 0;
  ev.args[trace::arg::count] = bytes;
  ev.ret = bytes;
  return ev;
}

const ReportData::File& file(const ReportData& d, const std::string& path) {
  for (const auto& f : d.files)
    if (f.path == path) return f;
  FAIL("no file " << path);
  return d.files.front();
}

}  // namespace

TEST_CASE("file patterns: N-to-N, N-to-1, shared read") {
  std::vector<std::string> paths{"/own0", "/own1", "/shared", "/input"};
  std::vector<int32_t> l2g{0, 1, 2, 3}, comms{0};
  std::vector<const std::vector<int32_t>*> members;
  TableNames names(l2g, paths, comms, members);
  ReportCollector c(2, 1000);
  c.add(0, 10, 5, write_event(0, 4096), names);
  c.add(1, 20, 5, write_event(1, 4096), names);
  c.add(0, 600, 5, write_event(2, 100), names);
  c.add(1, 700, 5, write_event(2, 100), names);
  c.add(0, 800, 5, write_event(3, 10, "read"), names);
  c.add(1, 800, 5, write_event(3, 10, "read"), names);
  ReportData d;
  c.fill(d);
  CHECK(file(d, "/own0").pattern == "N-to-N (file per rank)");
  CHECK(file(d, "/own1").ranks == 1);
  CHECK(file(d, "/shared").pattern == "N-to-1 (shared write)");
  CHECK(file(d, "/shared").written == 200);
  CHECK(file(d, "/shared").ranks == 2);
  REQUIRE(d.volume.size() == 2);
  CHECK(d.volume[0][0] == 4096);  // rank 0's first write in the first bin
  CHECK(d.volume[1][ReportCollector::kBins * 7 / 10] == 100);
  CHECK(d.write_sizes[size_bin(4096)] == 2);
  CHECK(file(d, "/input").pattern == "shared read");
  CHECK(file(d, "/input").read == 20);
  CHECK(d.read_sizes[size_bin(10)] == 2);
  REQUIRE(d.ops.size() == 2);
  CHECK(d.ops[0].name == "write");
  CHECK(d.ops[0].calls == 4);
  CHECK(d.ops[0].bytes == 8392);
}
