#include "postproc/compare.hpp"

#include <fcntl.h>

#include <algorithm>
#include <catch2/catch.hpp>

#include "postproc/analyze.hpp"
#include "postproc/plan.hpp"
#include "test/postproc/fixture.hpp"

using namespace mpior;
using namespace mpior::test;
using Catch::Matchers::Contains;
using trace::Kind;

namespace {

trace::Plan one_write() {
  RankBuilder b(0, 1);
  int32_t f = b.file("/out/a");
  b.open(f, 3, O_CREAT | O_WRONLY, 3);
  b.pwrite(f, 3, 0, 1024, 1024);
  std::vector<trace::RankTrace> ranks;
  ranks.push_back(b.finish());
  postproc::TraceSet set = make_set(std::move(ranks));
  postproc::Analysis a = postproc::analyze(set);
  return postproc::build_plan(std::move(set), a);
}

// The same plan with the pwrite in a loop that runs `trips` times.
trace::Plan in_loop(trace::Plan p, int64_t trips) {
  trace::Stream& s = p.streams.at(0);
  auto it = std::find_if(s.nodes.begin(), s.nodes.end(),
                         [&s](const trace::Node& n) { return !n.loop && s.leaves[n.index].kind == Kind::pwrite; });
  REQUIRE(it != s.nodes.end());
  s.nodes.insert(it, trace::Node{true, 1, trace::Param{s.values.add_scalar(trips), -1}});
  return p;
}

// Opens /out/a as fd 3 and closes it, opens /out/b as `second` and writes
// through `written`.
trace::Plan reopened(int64_t second, int64_t written) {
  RankBuilder b(0, 1);
  int32_t fa = b.file("/out/a"), fb = b.file("/out/b");
  b.open(fa, 3, O_CREAT | O_WRONLY, 3);
  b.call(Kind::close, {{trace::arg::handle, 3}, {trace::arg::file, fa}});
  b.open(fb, second, O_CREAT | O_WRONLY, second);
  b.pwrite(fb, written, 0, 1024, 1024);
  std::vector<trace::RankTrace> ranks;
  ranks.push_back(b.finish());
  postproc::TraceSet set = make_set(std::move(ranks));
  postproc::Analysis a = postproc::analyze(set);
  return postproc::build_plan(std::move(set), a);
}

}  // namespace

TEST_CASE("an fd number reused for another file pairs anew", "[postproc][compare]") {
  // The second run's fds 3 and 4 went to sockets the MPI library opened
  // untraced: the same calls, other numbers.
  CHECK(postproc::compare_plans(reopened(3, 3), reopened(5, 5)) == "");
  CHECK(postproc::compare_plans(reopened(5, 5), reopened(3, 3)) == "");
  // A write through another fd than the open returned still differs.
  CHECK_THAT(postproc::compare_plans(reopened(3, 3), reopened(5, 3)), Contains("fd"));
}

TEST_CASE("a loop of one compares equal to the plain call the tracer folds it into", "[postproc][compare]") {
  trace::Plan plain = one_write();
  trace::Plan looped = in_loop(plain, 1);
  REQUIRE(plain.streams[0].nodes.size() + 1 == looped.streams[0].nodes.size());
  CHECK(postproc::compare_plans(plain, looped) == "");
  CHECK(postproc::compare_plans(looped, plain) == "");
  CHECK(postproc::compare_plans(looped, plain, true) == "");
}

TEST_CASE("a loop of one still compares its body's call sites", "[postproc][compare]") {
  trace::Plan plain = one_write();
  trace::Plan looped = in_loop(plain, 1);
  for (trace::Leaf& l : looped.streams[0].leaves)
    if (l.kind == Kind::pwrite) l.callsite += 1;
  // The events (kind, arguments, results) are the same; the call site is not.
  CHECK(postproc::compare_plans(plain, looped, true) == "");
  CHECK_THAT(postproc::compare_plans(plain, looped), Contains("loop-tree nodes"));
}
