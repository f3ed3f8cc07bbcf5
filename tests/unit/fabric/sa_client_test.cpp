// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SaClient + MadRequester against a fake transport: request contents, TID matching on the low 32
// bits, response validation, status mapping, duplicates, retries with backoff, and timeouts.
#include <gtest/gtest.h>

#include <optional>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include "fabric/sa_client.h"
#include "fake_sender.h"
#include "mad/mcmember_record.h"

namespace ibat::fabric {
namespace {

using namespace std::chrono_literals;
using test::FakeSender;
using test::path_answer;
using test::sa_answer;

constexpr core::Lid kSmLid{1};

core::Gid gid(std::uint64_t guid) { return core::Gid::from_parts(0xfe80000000000000ULL, guid); }

core::PathRecord path_between(const core::Gid& sgid, const core::Gid& dgid) {
  core::PathRecord p;
  p.sgid = sgid;
  p.dgid = dgid;
  p.slid = core::Lid{5};
  p.dlid = core::Lid{12};
  p.mtu = 4;
  p.rate = 3;
  p.pkt_life = 18;
  p.sl = 2;
  p.pkey = core::Pkey{0xFFFF};
  return p;
}

class SaClientTest : public ::testing::Test {
 protected:
  SaClientTest() { sa.set_sm(kSmLid, 0); }

  core::PathQuery query(std::uint64_t id = 1) {
    core::PathQuery q;
    q.id = id;
    q.sgid = gid(3);
    q.dgid = gid(0xb);
    return q;
  }

  // Starts a query and records its results.
  void start(const core::PathQuery& q) {
    sa.query_path(q, [this](const core::QueryResult& r) { results.push_back(r); });
  }

  asio::io_context loop;
  FakeSender sender;
  MadRequester requester{loop, sender, 7};
  SaClient sa{requester, RetryPolicy{5ms, 2, 0.25, 8}};
  std::vector<core::QueryResult> results;
};

TEST_F(SaClientTest, PathRecordGetCarriesDgidSgidPkeyAndGoesToTheSm) {
  start(query());
  ASSERT_EQ(sender.sent.size(), 1U);
  const OutgoingMad& out = sender.sent[0];
  EXPECT_EQ(out.route, MadRoute::sa);
  EXPECT_EQ(out.dlid, kSmLid);
  EXPECT_EQ(out.remote_qpn, 1U);
  EXPECT_GT(out.timeout_ms, 0U);
  auto mad = mad::decode_sa_mad(out.bytes);
  ASSERT_TRUE(mad.ok());
  EXPECT_EQ(mad->header.method, mad::method::kGet);
  EXPECT_EQ(mad->header.attr_id, mad::attr::kPathRecord);
  EXPECT_EQ(mad->sa.component_mask,
            mad::pr_mask::kDgid | mad::pr_mask::kSgid | mad::pr_mask::kPkey | mad::pr_mask::kNumbPath);
  auto record = mad::decode_path_record(mad->data.first(mad::kPathRecordSize));
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->dgid, gid(0xb));
  EXPECT_EQ(record->sgid, gid(3));
  EXPECT_EQ(record->numb_path, 1);
}

TEST_F(SaClientTest, AServiceIdAndQosClassGoWithTheirComponentMaskBits) {
  core::PathQuery q = query();
  q.service_id = 0x0000000001060CBCULL;
  q.qos_class = 4;
  start(q);
  auto mad = mad::decode_sa_mad(sender.sent.at(0).bytes);
  ASSERT_TRUE(mad.ok());
  // OpenSM matches a service-id rule only with both ServiceID bits, a qos-class rule with its bit.
  EXPECT_EQ(mad->sa.component_mask & (mad::pr_mask::kServiceId | mad::pr_mask::kQosClass),
            mad::pr_mask::kServiceId | mad::pr_mask::kQosClass);
  auto record = mad::decode_path_record(mad->data.first(mad::kPathRecordSize));
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->service_id, 0x0000000001060CBCULL);
  EXPECT_EQ(record->qos_class, 4);
  // Without them, neither bit.
  start(query());
  mad = mad::decode_sa_mad(sender.sent.at(1).bytes);
  ASSERT_TRUE(mad.ok());
  EXPECT_EQ(mad->sa.component_mask & (mad::pr_mask::kServiceId | mad::pr_mask::kQosClass), 0U);
}

TEST_F(SaClientTest, LidTargetUsesDlidMask) {
  core::PathQuery q = query();
  q.dgid.reset();
  q.dlid = core::Lid{12};
  start(q);
  auto mad = mad::decode_sa_mad(sender.sent.at(0).bytes);
  ASSERT_TRUE(mad.ok());
  EXPECT_EQ(mad->sa.component_mask & (mad::pr_mask::kDlid | mad::pr_mask::kDgid), mad::pr_mask::kDlid);
  requester.on_receive(path_answer(sender.sent[0], path_between(gid(3), gid(0xb)), kSmLid));
  ASSERT_EQ(results.size(), 1U);
  EXPECT_EQ(results[0].error, core::Error::ok);
}

TEST_F(SaClientTest, AnswerWithRewrittenUpperTidIsMatchedOnLow32Bits) {
  start(query());
  const core::PathRecord path = path_between(gid(3), gid(0xb));
  EXPECT_TRUE(requester.on_receive(path_answer(sender.sent[0], path, kSmLid)));
  ASSERT_EQ(results.size(), 1U);
  EXPECT_EQ(results[0].error, core::Error::ok);
  EXPECT_EQ(results[0].path, path);
  EXPECT_EQ(sa.in_flight(), 0U);
}

TEST_F(SaClientTest, DuplicateAndUnknownAnswersAreCountedAndIgnored) {
  start(query());
  const ReceivedMad answer = path_answer(sender.sent[0], path_between(gid(3), gid(0xb)), kSmLid);
  requester.on_receive(answer);
  requester.on_receive(answer);
  ReceivedMad stranger = answer;
  stranger.bytes[15] ^= 0x5A;  // another low-32 TID
  requester.on_receive(stranger);
  EXPECT_EQ(results.size(), 1U);
  EXPECT_EQ(requester.counters().late_or_duplicate, 2U);
}

TEST_F(SaClientTest, AnswerFromAnotherLidIsRejectedAndTheRealOneStillAccepted) {
  start(query());
  requester.on_receive(path_answer(sender.sent[0], path_between(gid(3), gid(0xb)), core::Lid{99}));
  EXPECT_TRUE(results.empty());
  EXPECT_EQ(requester.counters().invalid_responses, 1U);
  requester.on_receive(path_answer(sender.sent[0], path_between(gid(3), gid(0xb)), kSmLid));
  ASSERT_EQ(results.size(), 1U);
  EXPECT_EQ(results[0].error, core::Error::ok);
}

TEST_F(SaClientTest, WrongAttributeMethodOrClassIsRejected) {
  start(query());
  const auto record = mad::encode_path_record(path_between(gid(3), gid(0xb)));
  requester.on_receive(sa_answer(sender.sent[0], mad::attr::kMcMemberRecord, record, kSmLid));
  ReceivedMad wrong_method = path_answer(sender.sent[0], path_between(gid(3), gid(0xb)), kSmLid);
  wrong_method.bytes[3] = mad::method::kGetTableResp;
  requester.on_receive(wrong_method);
  ReceivedMad wrong_class = path_answer(sender.sent[0], path_between(gid(3), gid(0xb)), kSmLid);
  wrong_class.bytes[1] = mad::mgmt_class::kSubnLidRouted;
  requester.on_receive(wrong_class);
  EXPECT_TRUE(results.empty());
  EXPECT_EQ(requester.counters().invalid_responses, 3U);
}

TEST_F(SaClientTest, RecordForAnotherDestinationIsInvalid) {
  start(query());
  requester.on_receive(path_answer(sender.sent[0], path_between(gid(3), gid(0xc)), kSmLid));
  ASSERT_EQ(results.size(), 1U);
  EXPECT_EQ(results[0].error, core::Error::invalid);
}

TEST_F(SaClientTest, SaStatusIsMappedToCoreErrors) {
  const std::pair<std::uint16_t, core::Error> cases[] = {
      {0x0300, core::Error::no_record},  // ERR_NO_RECORDS
      {0x0500, core::Error::no_record},  // ERR_INVALID_GID
      {0x0200, core::Error::invalid},    // ERR_REQ_INVALID
      {0x0600, core::Error::invalid},    // ERR_REQ_INSUFFICIENT_COMPONENTS
      {0x0100, core::Error::timeout},    // ERR_NO_RESOURCES
      {0x000C, core::Error::invalid},    // bad attribute (common invalid-field code)
  };
  std::uint64_t id = 1;
  for (const auto& [status, expected] : cases) {
    results.clear();
    start(query(id++));
    requester.on_receive(sa_answer(sender.sent.back(), mad::attr::kPathRecord, {}, kSmLid, status));
    ASSERT_EQ(results.size(), 1U) << std::hex << status;
    EXPECT_EQ(results[0].error, expected) << std::hex << status;
  }
}

TEST_F(SaClientTest, GetRespWithoutRecordIsNoRecord) {
  start(query());
  requester.on_receive(sa_answer(sender.sent[0], mad::attr::kPathRecord, {}, kSmLid));
  ASSERT_EQ(results.size(), 1U);
  EXPECT_EQ(results[0].error, core::Error::no_record);
}

TEST_F(SaClientTest, SilentSaIsRetriedWithTheSameTidThenTimesOut) {
  start(query());
  loop.run();  // runs until the last attempt timer fires
  ASSERT_EQ(results.size(), 1U);
  EXPECT_EQ(results[0].error, core::Error::timeout);
  ASSERT_EQ(sender.sent.size(), 3U);  // first attempt + 2 retries
  EXPECT_EQ(test::tid_of(sender.sent[1]), test::tid_of(sender.sent[0]));
  EXPECT_EQ(requester.counters().retries, 2U);
  EXPECT_EQ(requester.counters().timeouts, 3U);
  // The kernel keeps matching answers until the last attempt can end (attempt k waits ~5 ms * 2^k,
  // at most 25 % longer): 6.25 + 12.5 + 25 ms from the first send; from each resend, as long as
  // its attempts left can take, which each timeout lengthens (RoundTripEstimate::on_timeout).
  EXPECT_EQ(sender.sent[0].timeout_ms, 44U);
  EXPECT_GE(sender.sent[1].timeout_ms, 38U);
  EXPECT_GE(sender.sent[2].timeout_ms, 25U);
  // The last timer fired after at least 15 ms (20 ms - 25 %): later MADs to the SA wait twice that.
  const RoundTripEstimate* rtt = requester.round_trip(mad::mgmt_class::kSubnAdm, kSmLid);
  ASSERT_NE(rtt, nullptr);
  EXPECT_GE(rtt->timer_floor(), 30ms);
}

TEST_F(SaClientTest, AnswerToARetryCompletesAndLateAnswerIsCounted) {
  start(query());
  asio::io_context::count_type ran = 0;
  while (sender.sent.size() < 2 && (ran = loop.run_one()) > 0) {
  }
  ASSERT_EQ(sender.sent.size(), 2U);
  const ReceivedMad answer = path_answer(sender.sent[1], path_between(gid(3), gid(0xb)), kSmLid);
  requester.on_receive(answer);
  requester.on_receive(answer);  // the answer to the first attempt, arriving late
  ASSERT_EQ(results.size(), 1U);
  EXPECT_EQ(results[0].error, core::Error::ok);
  EXPECT_EQ(requester.counters().late_or_duplicate, 1U);
  loop.run();  // no timer of the finished query fires a result
  EXPECT_EQ(results.size(), 1U);
}

// The SA's round trip, timed by a query answered at its first attempt (after 30 ms of real time,
// or more on a slow machine), raises every later MAD timer to the SA to twice it: each attempt of
// the next query waits at least 60 ms, not the policy's 5, 10, 20 ms, and the kernel is asked to
// match answers for all three attempts (3 x 60 ms x 1.25 = 225 ms). The SM's own class has no sample.
TEST_F(SaClientTest, TheSasRoundTripRaisesTheTimersOfLaterQueries) {
  SaClient patient{requester, RetryPolicy{10s, 0}};
  patient.set_sm(kSmLid, 0);
  patient.query_path(query(1), [this](const core::QueryResult& r) { results.push_back(r); });
  asio::steady_timer wait(loop, 30ms);
  wait.async_wait([&](const std::error_code&) {
    requester.on_receive(path_answer(sender.sent[0], path_between(gid(3), gid(0xb)), kSmLid));
  });
  loop.run_one();
  ASSERT_EQ(results.size(), 1U);
  const RoundTripEstimate* sa_rtt = requester.round_trip(mad::mgmt_class::kSubnAdm, kSmLid);
  ASSERT_NE(sa_rtt, nullptr);
  EXPECT_GE(sa_rtt->srtt(), 30ms);
  EXPECT_EQ(requester.round_trip(mad::mgmt_class::kSubnLidRouted, kSmLid), nullptr);

  start(query(2));
  ASSERT_EQ(sender.sent.size(), 2U);
  EXPECT_GE(sender.sent[1].timeout_ms, 225U);
}

// Karn's rule: an answer that came after a resend may answer either attempt, so it times nothing.
TEST_F(SaClientTest, AnAnswerAfterAResendDoesNotTimeTheRoundTrip) {
  start(query());
  while (sender.sent.size() < 2 && loop.run_one() > 0) {
  }
  requester.on_receive(path_answer(sender.sent[1], path_between(gid(3), gid(0xb)), kSmLid));
  ASSERT_EQ(results.size(), 1U);
  const RoundTripEstimate* rtt = requester.round_trip(mad::mgmt_class::kSubnAdm, kSmLid);
  ASSERT_NE(rtt, nullptr) << "the timeout backed the floor off";
  EXPECT_EQ(rtt->srtt(), core::Duration::zero()) << "no sample";
}

// The port monitor checks the SM on a timeout only when the SA went silent (PortMonitorLogic):
// each timed-out attempt names when it went out, and each answer when it came, so that a timeout
// whose attempt went out before the SA's last answer tells of a queue, not a lost SA.
TEST_F(SaClientTest, TimeoutsNameTheirAttemptsSendTimeAndAnswersTheirArrival) {
  std::vector<core::TimePoint> sent;
  std::vector<core::TimePoint> heard;
  requester.on_remote_timeout([&](MadRoute route, core::Lid dlid, core::TimePoint attempt_sent) {
    EXPECT_EQ(route, MadRoute::sa);
    EXPECT_EQ(dlid, kSmLid);
    sent.push_back(attempt_sent);
  });
  requester.on_answer([&](core::Lid slid, core::TimePoint at) {
    EXPECT_EQ(slid, kSmLid);
    heard.push_back(at);
  });
  start(query(1));
  start(query(2));
  ASSERT_EQ(sender.sent.size(), 2U);
  // The answer to the first query comes after the second went out; the second stays unanswered.
  requester.on_receive(path_answer(sender.sent[0], path_between(gid(3), gid(0xb)), kSmLid));
  ASSERT_EQ(heard.size(), 1U);
  while (sent.empty() && loop.run_one() > 0) {
  }
  ASSERT_EQ(sent.size(), 1U);
  EXPECT_LE(sent[0], heard[0]) << "its first attempt went out before the answer";
  // Its resend went out after it: every later timeout is the SA's silence.
  loop.run();
  ASSERT_EQ(sent.size(), 3U);
  EXPECT_GT(sent[1], heard[0]);
  EXPECT_GT(sent[2], sent[1]);
  ASSERT_EQ(results.size(), 2U);
  EXPECT_EQ(results[1].error, core::Error::timeout);
}

TEST_F(SaClientTest, CancelledQueryNeverCompletes) {
  start(query(42));
  EXPECT_TRUE(sa.cancel(42));
  EXPECT_FALSE(sa.cancel(42));
  requester.on_receive(path_answer(sender.sent[0], path_between(gid(3), gid(0xb)), kSmLid));
  loop.run();
  EXPECT_TRUE(results.empty());
}

TEST_F(SaClientTest, RetriesFollowTheSmToItsNewLid) {
  start(query());
  sa.set_sm(core::Lid{7}, 0);
  while (sender.sent.size() < 2 && loop.run_one() > 0) {
  }
  ASSERT_EQ(sender.sent.size(), 2U);
  EXPECT_EQ(sender.sent[1].dlid, core::Lid{7});
  requester.on_receive(path_answer(sender.sent[1], path_between(gid(3), gid(0xb)), core::Lid{7}));
  ASSERT_EQ(results.size(), 1U);
  EXPECT_EQ(results[0].error, core::Error::ok);
}

TEST_F(SaClientTest, RefusedSendIsRetriedLikeALostMad) {
  sender.accept = false;
  start(query());
  loop.run();
  EXPECT_EQ(requester.counters().send_failures, 3U);
  ASSERT_EQ(results.size(), 1U);
  EXPECT_EQ(results[0].error, core::Error::timeout);
}

TEST_F(SaClientTest, BroadcastGroupParametersComeFromMcMemberRecord) {
  std::optional<core::BroadcastParams> got;
  sa.query_broadcast_group(gid(3), core::Pkey{0xFFFF}, [&](core::Error e, const core::BroadcastParams& p) {
    ASSERT_EQ(e, core::Error::ok);
    got = p;
  });
  auto request = mad::decode_sa_mad(sender.sent.at(0).bytes);
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->header.attr_id, mad::attr::kMcMemberRecord);
  mad::McMemberRecord group;
  group.mgid = mad::ipoib_broadcast_mgid(core::Pkey{0xFFFF});
  group.mtu = 4;
  group.rate = 3;
  group.sl = 1;
  group.pkt_life = 18;
  std::array<std::uint8_t, 56> padded{};  // OpenSM pads the 52-byte record to 56
  const auto record = mad::encode_mcmember_record(group);
  std::copy(record.begin(), record.end(), padded.begin());
  requester.on_receive(sa_answer(sender.sent[0], mad::attr::kMcMemberRecord, padded, kSmLid));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->mtu, 4);
  EXPECT_EQ(got->rate, 3);
  EXPECT_EQ(got->sl, 1);
  EXPECT_EQ(got->pkt_life, 18);
}

}  // namespace
}  // namespace ibat::fabric
