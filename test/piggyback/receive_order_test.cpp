// ReceiveOrder against a probe the test fills with what "MPI matched": each
// case states the matching MPI's non-overtaking rule implies and checks the
// sequence numbers the tracer derives from it.
#include "preload/piggyback/receive_order.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <set>

using namespace mpior::piggyback;

namespace {

constexpr int32_t kAny = -1;

// Posted receives MPI has matched (handle -> the envelope of the message)
// and the ones it never will (cancelled). The probe records what it was
// asked, so tests can check a receive was (or was not) probed.
struct FakeMpi {
  std::map<uint64_t, Envelope> matched;
  std::set<uint64_t> cancelled;
  std::multiset<uint64_t> probed;

  ReceiveOrder::StatusProbe probe() {
    return [this](uint64_t handle, Envelope* out) {
      probed.insert(handle);
      if (cancelled.count(handle)) return false;
      auto it = matched.find(handle);
      REQUIRE(it != matched.end());  // ReceiveOrder only asks about receives MPI must have matched
      *out = it->second;
      return true;
    };
  }
};

}  // namespace

TEST_CASE("receive order: in-order receives on one channel are numbered 0, 1, 2", "[piggyback][receive_order]") {
  FakeMpi mpi;
  ReceiveOrder order(mpi.probe());
  for (uint64_t h = 1; h <= 3; ++h) order.posted(0, h, {2, 7});
  for (uint64_t h = 1; h <= 3; ++h) mpi.matched[h] = {2, 7};

  CHECK(order.completed(0, 1, {2, 7}) == 0);
  CHECK(order.completed(0, 2, {2, 7}) == 1);
  CHECK(order.completed(0, 3, {2, 7}) == 2);
  CHECK(order.outstanding() == 0);
  CHECK(mpi.probed.empty());  // nothing earlier was left to ask about
}

TEST_CASE("receive order: thesis Figure 4.1, two receives of one channel completed in reverse order",
          "[piggyback][receive_order]") {
  FakeMpi mpi;
  ReceiveOrder order(mpi.probe());
  const uint64_t r1 = 11, r2 = 12;
  order.posted(0, r1, {2, 1234});
  order.posted(0, r2, {2, 1234});
  // Non-overtaking: r1 took node 2's first message, r2 the second.
  mpi.matched[r1] = {2, 1234};
  mpi.matched[r2] = {2, 1234};
  REQUIRE(order.outstanding() == 2);

  CHECK(order.completed(0, r2, {2, 1234}) == 1);  // Wait(r2)
  CHECK(mpi.probed.count(r1) == 1);
  CHECK(order.outstanding() == 1);
  CHECK(order.completed(0, r1, {2, 1234}) == 0);
  CHECK(order.outstanding() == 0);
  CHECK(mpi.probed.count(r1) == 1);  // numbered once, not asked again
}

TEST_CASE("receive order: a wildcard receive is numbered in the channel of the message it matched",
          "[piggyback][receive_order]") {
  FakeMpi mpi;
  ReceiveOrder order(mpi.probe());
  order.posted(0, 1, {kAny, kAny});
  order.posted(0, 2, {3, kAny});
  order.posted(0, 3, {3, 9});
  mpi.matched[1] = {3, 9};
  mpi.matched[2] = {3, 9};
  mpi.matched[3] = {3, 9};

  CHECK(order.completed(0, 3, {3, 9}) == 2);
  CHECK(order.completed(0, 1, {3, 9}) == 0);
  CHECK(order.completed(0, 2, {3, 9}) == 1);
  CHECK(order.outstanding() == 0);
}

TEST_CASE("receive order: an earlier wildcard receive that matched another channel does not shift numbering",
          "[piggyback][receive_order]") {
  FakeMpi mpi;
  ReceiveOrder order(mpi.probe());
  const uint64_t wild = 1, r = 2;
  order.posted(0, wild, {kAny, kAny});
  order.posted(0, r, {1, 5});
  mpi.matched[wild] = {4, 8};  // took a message of channel (4, 8)
  mpi.matched[r] = {1, 5};

  CHECK(order.completed(0, r, {1, 5}) == 0);
  CHECK(mpi.probed.count(wild) == 1);
  CHECK(order.completed(0, wild, {4, 8}) == 0);
  // The channels go on independently.
  CHECK(order.completed_blocking(0, {1, 5}) == 1);
  CHECK(order.completed_blocking(0, {4, 8}) == 1);
}

TEST_CASE("receive order: an earlier receive that cannot match the message is not asked about",
          "[piggyback][receive_order]") {
  FakeMpi mpi;
  ReceiveOrder order(mpi.probe());
  order.posted(0, 1, {kAny, 6});  // wrong tag for the completed message
  order.posted(0, 2, {2, kAny});  // wrong source
  order.posted(0, 3, {1, 5});
  mpi.matched[3] = {1, 5};

  CHECK(order.completed(0, 3, {1, 5}) == 0);
  CHECK(mpi.probed.empty());  // the fake would have failed: 1 and 2 are unmatched
  CHECK(order.outstanding() == 2);
}

TEST_CASE("receive order: channels differing in tag, source or communicator are numbered independently",
          "[piggyback][receive_order]") {
  FakeMpi mpi;
  ReceiveOrder order(mpi.probe());
  CHECK(order.completed_blocking(0, {1, 5}) == 0);
  CHECK(order.completed_blocking(0, {1, 6}) == 0);
  CHECK(order.completed_blocking(0, {2, 5}) == 0);
  CHECK(order.completed_blocking(3, {1, 5}) == 0);
  CHECK(order.completed_blocking(0, {1, 5}) == 1);
  CHECK(order.completed_blocking(3, {1, 5}) == 1);
  CHECK(order.completed_blocking(0, {1, 6}) == 1);
  CHECK(order.completed_blocking(0, {2, 5}) == 1);

  // A receive outstanding on another communicator is never asked about.
  order.posted(7, 100, {1, 5});
  CHECK(order.completed_blocking(0, {1, 5}) == 2);
  CHECK(mpi.probed.empty());
  CHECK(order.outstanding() == 1);
}

TEST_CASE("receive order: a blocking receive comes after every outstanding one of its channel",
          "[piggyback][receive_order]") {
  FakeMpi mpi;
  ReceiveOrder order(mpi.probe());
  order.posted(0, 1, {2, 3});
  order.posted(0, 2, {kAny, 3});
  order.posted(0, 3, {2, 4});  // another tag: not before the blocking one
  mpi.matched[1] = {2, 3};
  mpi.matched[2] = {2, 3};

  CHECK(order.completed_blocking(0, {2, 3}) == 2);
  CHECK(mpi.probed.count(3) == 0);
  CHECK(order.outstanding() == 3);  // numbered but not yet completed
  CHECK(order.completed(0, 2, {2, 3}) == 1);
  CHECK(order.completed(0, 1, {2, 3}) == 0);
  CHECK(order.outstanding() == 1);
}

TEST_CASE("receive order: a cancelled receive does not consume a number", "[piggyback][receive_order]") {
  FakeMpi mpi;
  ReceiveOrder order(mpi.probe());

  SECTION("forgotten explicitly") {
    order.posted(0, 1, {2, 3});
    order.posted(0, 2, {2, 3});
    order.forget(0, 1);
    CHECK(order.outstanding() == 1);
    mpi.matched[2] = {2, 3};
    CHECK(order.completed(0, 2, {2, 3}) == 0);
    CHECK(mpi.probed.empty());
  }
  SECTION("found cancelled by the probe") {
    order.posted(0, 1, {2, 3});
    order.posted(0, 2, {2, 3});
    mpi.cancelled.insert(1);
    mpi.matched[2] = {2, 3};
    CHECK(order.completed(0, 2, {2, 3}) == 0);
    CHECK(mpi.probed.count(1) == 1);
    CHECK(order.outstanding() == 0);  // dropped, so a later forget finds nothing
    order.forget(0, 1);
    CHECK(order.outstanding() == 0);
    CHECK(order.completed_blocking(0, {2, 3}) == 1);
  }
  SECTION("forgetting an unknown handle or communicator changes nothing") {
    order.posted(0, 1, {2, 3});
    order.forget(0, 99);
    order.forget(5, 1);
    CHECK(order.outstanding() == 1);
  }
}

TEST_CASE("receive order: a receive posted before tracing knew of it counts as blocking",
          "[piggyback][receive_order]") {
  FakeMpi mpi;
  ReceiveOrder order(mpi.probe());
  order.posted(0, 1, {2, 3});
  mpi.matched[1] = {2, 3};
  CHECK(order.completed(0, 42, {2, 3}) == 1);  // unknown handle: after the outstanding one
  CHECK(order.completed(0, 1, {2, 3}) == 0);
}

TEST_CASE("receive order: outstanding counts every communicator and drops to zero", "[piggyback][receive_order]") {
  FakeMpi mpi;
  ReceiveOrder order(mpi.probe());
  CHECK(order.outstanding() == 0);
  order.posted(0, 1, {1, 1});
  order.posted(1, 2, {1, 1});
  order.posted(2, 3, {kAny, kAny});
  CHECK(order.outstanding() == 3);
  for (uint64_t h = 1; h <= 3; ++h) mpi.matched[h] = {1, 1};
  CHECK(order.completed(1, 2, {1, 1}) == 0);
  CHECK(order.outstanding() == 2);
  CHECK(order.completed(2, 3, {1, 1}) == 0);
  CHECK(order.completed(0, 1, {1, 1}) == 0);
  CHECK(order.outstanding() == 0);
}

TEST_CASE("receive order: sender and receiver number a scenario's messages alike", "[piggyback][receive_order]") {
  // Rank 1 and rank 2 send to rank 0 on communicator 0:
  //   rank 1: tag 5, tag 6, tag 5      rank 2: tag 5
  // Rank 0 posts Irecv(1,5)=a, Irecv(ANY,5)=b, Irecv(1,ANY)=c, then a blocking
  // Recv(ANY,ANY). Arrival order: 1:5, 2:5, 1:6, 1:5.
  // Matching: a<-1:5#0, b<-2:5#0, c<-1:6#0, Recv<-1:5#1.
  SendOrder rank1, rank2;
  const uint64_t s1a = rank1.next(0, 0, 5), s1b = rank1.next(0, 0, 6), s1c = rank1.next(0, 0, 5);
  const uint64_t s2a = rank2.next(0, 0, 5);
  REQUIRE(s1a == 0);
  REQUIRE(s1b == 0);
  REQUIRE(s1c == 1);
  REQUIRE(s2a == 0);
  CHECK(rank1.next(1, 0, 5) == 0);  // another communicator
  CHECK(rank1.next(0, 3, 5) == 0);  // another destination

  FakeMpi mpi;
  ReceiveOrder order(mpi.probe());
  order.posted(0, 'a', {1, 5});
  order.posted(0, 'b', {kAny, 5});
  order.posted(0, 'c', {1, kAny});
  mpi.matched['a'] = {1, 5};
  mpi.matched['b'] = {2, 5};
  mpi.matched['c'] = {1, 6};

  CHECK(order.completed_blocking(0, {1, 5}) == s1c);
  CHECK(order.completed(0, 'c', {1, 6}) == s1b);
  CHECK(order.completed(0, 'b', {2, 5}) == s2a);
  CHECK(order.completed(0, 'a', {1, 5}) == s1a);
  CHECK(order.outstanding() == 0);
}

TEST_CASE("receive order: an earlier wildcard receive comes after the receive that took its channel's first message",
          "[piggyback][receive_order]") {
  // Posted: y = Irecv(2,5), w = Irecv(ANY,ANY), r = Irecv(1,5).
  // Arrived: 2:5 #0 -> y, 2:5 #1 -> w, 1:5 #0 -> r. r completes first: w
  // must be probed (it could have taken r's message), and it is the second
  // message of channel (2,5), because y, posted before it, took the first.
  FakeMpi mpi;
  ReceiveOrder order(mpi.probe());
  const uint64_t y = 1, w = 2, r = 3;
  order.posted(0, y, {2, 5});
  order.posted(0, w, {kAny, kAny});
  order.posted(0, r, {1, 5});
  mpi.matched[y] = {2, 5};
  mpi.matched[w] = {2, 5};
  mpi.matched[r] = {1, 5};

  CHECK(order.completed(0, r, {1, 5}) == 0);
  CHECK(order.completed(0, w, {2, 5}) == 1);
  CHECK(order.completed(0, y, {2, 5}) == 0);
}
