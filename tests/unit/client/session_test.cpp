// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Batching in libibat's Session (docs/protocol.md, "Batching"): requests sent from reply handlers
// leave in one write when the reading call returns (or every kBatchFrames), none is left behind,
// and a request sent outside a handler is written at once. And the wait of a synchronous call:
// it reads for a while before it sleeps in poll().
#include "client/session.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <functional>

#include "fake_server.h"
#include "ibat.h"
#include "protocol/messages.h"

namespace ibat::test {
namespace {

namespace protocol = ibat::protocol;
using client::Session;

// Answers every RESOLVE at once with an empty `no record` reply.
void answer(FakeServer& server, const ReceivedFrame& f) {
  if (f.header.op != static_cast<std::uint8_t>(protocol::Op::resolve)) return;
  std::vector<std::uint8_t> out;
  protocol::append_resolve_reply(out, f.header.id, core::ResolveResult{core::Error::no_record, {}, {}, {}});
  server.reply(out);
}

// Sends one RESOLVE by LID; `then` runs when its reply arrives.
void resolve(Session& s, std::uint16_t lid, std::function<void()> then) {
  core::ResolveRequest req;
  req.target = core::Lid{lid};
  int rc = s.send([&](std::vector<std::uint8_t>& out,
                      std::uint32_t id) { protocol::append_resolve_request(out, id, req); },
                  [then = std::move(then)](std::uint32_t, int, const protocol::FrameHeader*,
                                           std::span<const std::uint8_t>) { then(); },
                  false, nullptr);
  ASSERT_EQ(rc, IBAT_OK);
}

TEST(Session, RequestsSentFromReplyHandlersLeaveInOneWriteWhenTheWaitReturns) {
  FakeServer server(answer);
  auto s = Session::connect(server.path());
  ASSERT_TRUE(s);
  constexpr int kFollowers = 10;
  int followers_done = 0;
  bool first_done = false;
  resolve(*s, 1, [&] {
    first_done = true;
    for (int i = 0; i < kFollowers; ++i) resolve(*s, static_cast<std::uint16_t>(2 + i), [&] { ++followers_done; });
  });
  EXPECT_EQ(s->writes(), 1u);  // outside a handler: written at once
  ASSERT_EQ(s->wait([&] { return first_done; }, 10000), IBAT_OK);
  EXPECT_EQ(s->writes(), 2u);  // the ten sent from the handler: one write
  // Nothing is held back: the server gets all eleven without another call on the session.
  EXPECT_EQ(server.wait_for_requests(1 + kFollowers).size(), 1u + kFollowers);
  ASSERT_EQ(s->wait([&] { return followers_done == kFollowers; }, 10000), IBAT_OK);
  EXPECT_EQ(s->writes(), 2u);
}

TEST(Session, ProcessWritesWhatItsHandlersSentBeforeItReturns) {
  FakeServer server(answer);
  auto s = Session::connect(server.path());
  ASSERT_TRUE(s);
  int done = 0;
  resolve(*s, 1, [&] { resolve(*s, 2, [&] { ++done; }); });
  ASSERT_EQ(server.wait_for_requests(1).size(), 1u);
  // The caller's own loop: poll the fd, then process() once.
  pollfd pfd{s->fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 10000), 1);
  ASSERT_EQ(s->process(), IBAT_OK);
  EXPECT_EQ(server.wait_for_requests(2).size(), 2u);  // the follow-up is out, not held
  EXPECT_EQ(s->writes(), 2u);
}

TEST(Session, HandlersSendingManyRequestsWriteEveryBatchFrames) {
  FakeServer server;  // never answers the followers
  auto s = Session::connect(server.path());
  ASSERT_TRUE(s);
  constexpr std::size_t kFollowers = Session::kBatchFrames + 1;
  bool first_done = false;
  resolve(*s, 1, [&] {
    first_done = true;
    for (std::size_t i = 0; i < kFollowers; ++i) resolve(*s, static_cast<std::uint16_t>(2 + i), [] {});
  });
  auto first = server.wait_for_requests(1);
  ASSERT_EQ(first.size(), 1u);
  answer(server, first[0]);
  ASSERT_EQ(s->wait([&] { return first_done; }, 10000), IBAT_OK);
  EXPECT_EQ(s->writes(), 3u);  // the first; kBatchFrames followers; the last one when the wait's read ended
  EXPECT_EQ(server.wait_for_requests(1 + kFollowers).size(), 1 + kFollowers);
}

// Stand-ins for the host's run queue (two CPUs).
std::optional<kernel::RunQueueSample> idle() { return kernel::RunQueueSample{2, 2}; }
std::optional<kernel::RunQueueSample> crowded() { return kernel::RunQueueSample{5, 2}; }

TEST(Session, AnAnswerThatIsAlreadyThereIsTakenWithoutSleepingInPoll) {
  FakeServer server(answer);
  auto s = Session::connect(server.path());
  ASSERT_TRUE(s);
  s->set_run_queue_sampler(idle);
  bool done = false;
  resolve(*s, 1, [&] { done = true; });
  pollfd pfd{s->fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 10000), 1);  // the reply is in the socket
  ASSERT_EQ(s->wait([&] { return done; }, 10000), IBAT_OK);
  EXPECT_EQ(s->sleeps(), 0u);  // read while spinning, before any poll()
}

TEST(Session, AWaitLongerThanTheSpinSleepsInPollAndKeepsItsTimeout) {
  FakeServer server;  // never answers
  auto s = Session::connect(server.path());
  ASSERT_TRUE(s);
  bool done = false;
  resolve(*s, 1, [&] { done = true; });
  EXPECT_EQ(s->wait([&] { return done; }, 20), IBAT_ETIMEOUT);
  EXPECT_GE(s->sleeps(), 1u);
  EXPECT_EQ(s->wait([&] { return done; }, 0), IBAT_ETIMEOUT);  // no time given: no spin, no sleep
}

TEST(Session, OnACrowdedHostTheWaitSleepsAtOnce) {
  FakeServer server(answer);
  auto s = Session::connect(server.path());
  ASSERT_TRUE(s);
  s->set_run_queue_sampler(crowded);
  // Two samples, kSampleEvery apart, see the host crowded: the first wait takes one and lasts long
  // enough (its timeout) for the second wait to take another.
  const int wait_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                           core::SpinPolicy::kSampleEvery).count()) + 1;
  EXPECT_EQ(s->wait([] { return false; }, wait_ms), IBAT_ETIMEOUT);
  const std::uint64_t sleeps = s->sleeps();
  bool done = false;
  resolve(*s, 1, [&] { done = true; });
  pollfd pfd{s->fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 10000), 1);  // the reply is in the socket
  ASSERT_EQ(s->wait([&] { return done; }, 10000), IBAT_OK);
  EXPECT_EQ(s->sleeps(), sleeps + 1);  // straight to poll(), no reads before it
}

}  // namespace
}  // namespace ibat::test
