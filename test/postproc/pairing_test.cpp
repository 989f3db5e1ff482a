#include <catch2/catch.hpp>

#include "postproc/analyze.hpp"
#include "test/postproc/fixture.hpp"
#include "trace/tool_error.hpp"

using namespace mpior;
using namespace mpior::test;
using Catch::Matchers::Contains;
using postproc::MessageEnd;
using postproc::MessagePair;
using trace::kAnySource;
using trace::kAnyTag;
using trace::kProcNull;
using trace::kReqRecv;
using trace::kReqSend;

namespace {

struct Paired {
  postproc::Analysis analysis;
  std::vector<MessagePair> pairs;
};

Paired pair_all(std::vector<RankBuilder>& ranks) {
  std::vector<trace::RankTrace> traces;
  for (RankBuilder& b : ranks) traces.push_back(b.finish());
  auto set = make_set(std::move(traces));
  Paired p;
  p.analysis = postproc::analyze(set, [&](const MessagePair& m) { p.pairs.push_back(m); });
  return p;
}

std::vector<RankBuilder> job(int32_t size) {
  std::vector<RankBuilder> ranks;
  for (int32_t r = 0; r < size; ++r) ranks.emplace_back(r, size);
  return ranks;
}

const MessagePair& on(const std::vector<MessagePair>& pairs, int32_t source, int32_t dest, int64_t tag,
                      uint64_t seq = 0) {
  for (const MessagePair& p : pairs)
    if (p.channel.source == source && p.channel.dest == dest && p.channel.tag == tag && p.seq == seq) return p;
  FAIL("no message " << source << "->" << dest << " tag " << tag << " #" << seq);
  throw;
}

}  // namespace

TEST_CASE("ANY_SOURCE and ANY_TAG receives pair through their statuses", "[postproc][pairing]") {
  auto ranks = job(3);
  ranks[0].send(0, 2, 5);
  ranks[1].send(0, 2, 6);
  ranks[2].recv(0, kAnySource, kAnyTag, 1, 6);  // event 0: rank 1's message
  ranks[2].recv(0, kAnySource, 5, 0, 5);        // event 1: rank 0's
  auto p = pair_all(ranks);
  REQUIRE(p.pairs.size() == 2);
  REQUIRE(p.analysis.messages.messages == 2);
  REQUIRE(p.analysis.messages.channels == 2);
  const MessagePair& from1 = on(p.pairs, 1, 2, 6);
  REQUIRE(from1.send == MessageEnd{1, 0, 0});
  REQUIRE(from1.recv == MessageEnd{2, 0, 0});
  const MessagePair& from0 = on(p.pairs, 0, 2, 5);
  REQUIRE(from0.send == MessageEnd{0, 0, 0});
  REQUIRE(from0.recv == MessageEnd{2, 0, 1});
}

TEST_CASE("irecvs complete through mpior_complete and pair in posting order (thesis Figure 4.1)",
          "[postproc][pairing]") {
  auto ranks = job(2);
  ranks[1].send(0, 0, 1234);  // events 0 and 1
  ranks[1].send(0, 0, 1234);
  ranks[0].irecv(0, 1, 1234, 1);            // event 0: r1
  ranks[0].irecv(0, 1, 1234, 2);            // event 1: r2
  ranks[0].wait({{2, kReqRecv, 1, 1234}});  // events 2, 3: r2 completes first
  ranks[0].wait({{1, kReqRecv, 1, 1234}});  // events 4, 5
  auto p = pair_all(ranks);
  REQUIRE(p.pairs.size() == 2);
  REQUIRE(on(p.pairs, 1, 0, 1234, 0).send == MessageEnd{1, 0, 0});
  REQUIRE(on(p.pairs, 1, 0, 1234, 0).recv == MessageEnd{0, 0, 0});
  REQUIRE(on(p.pairs, 1, 0, 1234, 1).send == MessageEnd{1, 0, 1});
  REQUIRE(on(p.pairs, 1, 0, 1234, 1).recv == MessageEnd{0, 0, 1});
}

TEST_CASE("wildcard irecvs completed out of order take the source their status names", "[postproc][pairing]") {
  auto ranks = job(3);
  ranks[1].isend(0, 0, 3, 1);
  ranks[1].wait({{1, kReqSend, -1, -1}});
  ranks[2].send(0, 0, 4);
  ranks[0].irecv(0, kAnySource, kAnyTag, 1);  // event 0
  ranks[0].irecv(0, kAnySource, kAnyTag, 2);  // event 1
  ranks[0].wait({{2, kReqRecv, 1, 3}, {1, kReqRecv, 2, 4}});
  auto p = pair_all(ranks);
  REQUIRE(p.pairs.size() == 2);
  REQUIRE(on(p.pairs, 1, 0, 3).recv == MessageEnd{0, 0, 1});
  REQUIRE(on(p.pairs, 1, 0, 3).send == MessageEnd{1, 0, 0});
  REQUIRE(on(p.pairs, 2, 0, 4).recv == MessageEnd{0, 0, 0});
}

TEST_CASE("a blocking receive posted after a pending irecv keeps its own channel order", "[postproc][pairing]") {
  auto ranks = job(2);
  for (int i = 0; i < 3; ++i) ranks[1].send(0, 0, 9);
  ranks[0].irecv(0, 1, 9, 7);             // event 0: message #0
  ranks[0].recv(0, 1, 9, 1, 9);           // event 1: message #1
  ranks[0].wait({{7, kReqRecv, 1, 9}});   // events 2, 3
  ranks[0].recv(0, kAnySource, 9, 1, 9);  // event 4: message #2
  auto p = pair_all(ranks);
  REQUIRE(on(p.pairs, 1, 0, 9, 0).recv.event == 0);
  REQUIRE(on(p.pairs, 1, 0, 9, 1).recv.event == 1);
  REQUIRE(on(p.pairs, 1, 0, 9, 2).recv.event == 4);
  REQUIRE(on(p.pairs, 1, 0, 9, 2).send.event == 2);
}

TEST_CASE("sendrecv pairs both halves; PROC_NULL peers are not messages", "[postproc][pairing]") {
  auto ranks = job(3);
  for (int32_t r = 0; r < 3; ++r) {
    int32_t next = (r + 1) % 3, prev = (r + 2) % 3;
    ranks[size_t(r)].sendrecv(0, next, 0, prev, kAnyTag, prev, 0);
    ranks[size_t(r)].send(0, kProcNull, 1);
    ranks[size_t(r)].recv(0, kProcNull, 1, kProcNull, kAnyTag);
  }
  ranks[0].irecv(0, kProcNull, 1, 3);
  ranks[0].wait({{3, kReqRecv, kProcNull, kAnyTag}});
  auto p = pair_all(ranks);
  REQUIRE(p.pairs.size() == 3);
  REQUIRE(p.analysis.messages.unreceived == 0);
  REQUIRE(p.analysis.messages.orphan_completions == 0);
  REQUIRE(p.analysis.messages.never_completed == 0);
  for (int32_t r = 0; r < 3; ++r) {
    const MessagePair& m = on(p.pairs, r, (r + 1) % 3, 0);
    REQUIRE(m.send == MessageEnd{r, 0, 0});
    REQUIRE(m.recv == MessageEnd{(r + 1) % 3, 0, 0});
  }
}

TEST_CASE("peers are translated from communicator ranks to world ranks", "[postproc][pairing]") {
  auto ranks = job(4);
  for (int32_t r : {1, 3}) ranks[size_t(r)].comm(trace::CommOrigin::split, 0, 0, {3, 1});
  for (int32_t r : {0, 2}) ranks[size_t(r)].comm(trace::CommOrigin::split, 0, 0, {0, 2});
  for (auto& b : ranks) b.create(trace::Kind::MPI_Comm_split, 0, 2);
  ranks[1].send(2, 0, 7);        // comm rank 0 of {3, 1} is world 3
  ranks[3].recv(2, 1, 7, 1, 7);  // comm rank 1 is world 1
  auto p = pair_all(ranks);
  REQUIRE(p.pairs.size() == 1);
  REQUIRE(p.pairs[0].channel.source == 1);
  REQUIRE(p.pairs[0].channel.dest == 3);
  REQUIRE(p.pairs[0].channel.comm == p.analysis.comms.local_to_global[1][2]);
  REQUIRE(p.pairs[0].channel.comm != 0);
}

TEST_CASE("a receive no send matches is an error; a send never received is a warning", "[postproc][pairing]") {
  SECTION("receive without send") {
    auto ranks = job(2);
    ranks[0].send(0, 1, 3);
    ranks[1].recv(0, 0, 3, 0, 3);
    ranks[1].recv(0, kAnySource, 3, 0, 3);
    REQUIRE_THROWS_WITH(pair_all(ranks), Contains("receive without a matching send") &&
                                             Contains("rank 1 (<memory rank 1>) received 2 messages from rank 0") &&
                                             Contains("tag 3") && Contains("sent 1"));
  }
  SECTION("a send never received") {
    auto ranks = job(2);
    ranks[0].send(0, 1, 3);
    ranks[0].send(0, 1, 4);
    ranks[1].recv(0, 0, 3, 0, 3);
    auto p = pair_all(ranks);
    REQUIRE(p.analysis.messages.messages == 1);
    REQUIRE(p.analysis.messages.unreceived == 1);
    REQUIRE(p.analysis.messages.unreceived_channels.size() == 1);
    REQUIRE(p.analysis.messages.unreceived_channels[0].channel.tag == 4);
    REQUIRE(p.analysis.warnings.size() == 1);
    REQUIRE_THAT(p.analysis.warnings[0], Contains("rank 0 sent 1 messages to rank 1") && Contains("tag 4"));
  }
}

TEST_CASE("counting without a sink agrees with pairing", "[postproc][pairing]") {
  auto ranks = job(3);
  for (int i = 0; i < 5; ++i) {
    ranks[0].send(0, 1, i % 2);
    ranks[2].send(0, 1, i % 2);
  }
  for (int i = 0; i < 5; ++i) ranks[1].irecv(0, kAnySource, kAnyTag, i + 1);
  for (int i = 5; i-- > 0;) ranks[1].wait({{i + 1, kReqRecv, 0, i % 2}});
  for (int i = 0; i < 5; ++i) ranks[1].recv(0, 2, kAnyTag, 2, i % 2);
  std::vector<trace::RankTrace> traces;
  for (RankBuilder& b : ranks) traces.push_back(b.finish());
  auto set = make_set(traces);
  auto counted = postproc::analyze(set);
  auto paired = pair_all(ranks);
  REQUIRE(counted.messages.messages == 10);
  REQUIRE(paired.pairs.size() == 10);
  REQUIRE(paired.analysis.messages.messages == 10);
  REQUIRE(counted.messages.channels == paired.analysis.messages.channels);
  REQUIRE(counted.messages.channels == 4);
}

TEST_CASE("a rank's threads are ordered by start time", "[postproc][pairing]") {
  auto ranks = job(2);
  ranks[0].thread(0);
  ranks[0].at(50'000);
  ranks[0].send(0, 1, 7);  // later
  ranks[0].thread(1);
  ranks[0].at(100);
  ranks[0].send(0, 1, 7);  // earlier: message #0
  ranks[1].recv(0, 0, 7, 0, 7);
  ranks[1].recv(0, 0, 7, 0, 7);
  auto p = pair_all(ranks);
  REQUIRE(on(p.pairs, 0, 1, 7, 0).send == MessageEnd{0, 1, 0});
  REQUIRE(on(p.pairs, 0, 1, 7, 1).send == MessageEnd{0, 0, 0});
}

TEST_CASE("sends a receiver logged on behalf of its sender pair with its receives", "[postproc][pairing]") {
  auto ranks = job(2);
  ranks[1].call(trace::Kind::MPI_Send, {{trace::arg::comm, 0}, {trace::arg::peer, 0}, {trace::arg::tag, 2}}, 0, 1000, 0,
                trace::flag::on_behalf);
  ranks[1].recv(0, 0, 2, 0, 2);
  auto p = pair_all(ranks);
  REQUIRE(p.pairs.size() == 1);
  REQUIRE(p.pairs[0].channel.source == 0);
  REQUIRE(p.pairs[0].send == MessageEnd{1, 0, 0});
  REQUIRE(p.pairs[0].recv == MessageEnd{1, 0, 1});
}

TEST_CASE("irecvs never completed are not messages", "[postproc][pairing]") {
  auto ranks = job(2);
  ranks[0].send(0, 1, 1);
  ranks[1].irecv(0, 0, 1, 1);  // never waited: its message is "never received"
  ranks[1].irecv(0, 0, 1, 2);
  ranks[1].wait({{2, kReqRecv, 0, 1}});
  auto p = pair_all(ranks);
  REQUIRE(p.pairs.size() == 1);
  REQUIRE(p.pairs[0].recv.event == 1);
  REQUIRE(p.analysis.messages.never_completed == 1);
}

TEST_CASE("an event naming a communicator the rank does not have is rejected", "[postproc][pairing]") {
  auto ranks = job(2);
  ranks[0].send(5, 1, 1);
  REQUIRE_THROWS_WITH(pair_all(ranks), Contains("<memory rank 0>: MPI_Send (thread 0, event 0) uses communicator 5"));
  auto again = job(2);
  again[0].send(0, 7, 1);
  REQUIRE_THROWS_WITH(pair_all(again), Contains("destination 7 is not a rank of communicator 0"));
}

TEST_CASE("persistent starts pair as sends and posted receives; a cancelled receive is no message",
          "[postproc][pairing]") {
  namespace arg = trace::arg;
  auto ranks = job(2);
  // rank 0: one persistent send started twice (request ids 1 and 2)
  ranks[0].call(trace::Kind::MPI_Send_init, {{arg::comm, 0}, {arg::peer, 1}, {arg::tag, 3}, {arg::req_kind, kReqSend}});
  for (int64_t id : {1, 2}) {
    ranks[0].call(trace::Kind::MPI_Start,
                  {{arg::comm, 0}, {arg::peer, 1}, {arg::tag, 3}, {arg::req_kind, kReqSend}, {arg::request, id}});
    ranks[0].wait({{id, kReqSend, -1, -1}});
  }
  // rank 1: a persistent receive started twice, then a receive cancelled
  for (int64_t id : {1, 2}) {
    ranks[1].call(trace::Kind::MPI_Startall,
                  {{arg::comm, 0}, {arg::peer, 0}, {arg::tag, 3}, {arg::req_kind, kReqRecv}, {arg::request, id}});
    ranks[1].wait({{id, kReqRecv, 0, 3}});
  }
  ranks[1].irecv(0, kAnySource, 9, 3);
  ranks[1].call(trace::Kind::MPI_Cancel, {{arg::comm, 0}, {arg::req_kind, kReqRecv}, {arg::request, 3}});
  ranks[1].call(trace::Kind::mpior_complete, {{arg::comm, 0}, {arg::req_kind, kReqRecv}, {arg::request, 3}}, 0, 0, 1,
                trace::flag::cancelled);
  auto p = pair_all(ranks);
  REQUIRE(p.analysis.messages.messages == 2);
  REQUIRE(p.analysis.messages.unreceived == 0);
  REQUIRE(p.analysis.messages.never_completed == 0);
  on(p.pairs, 0, 1, 3, 0);
  on(p.pairs, 0, 1, 3, 1);
}
