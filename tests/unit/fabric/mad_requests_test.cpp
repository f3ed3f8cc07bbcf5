// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// MadRequests, scripted events and time (no asio, no threads, no sleeps): TIDs from the seed's first
// draw, skipping 0 and outstanding ones, wrapping; the jitter drawn after it in send order; a
// response matched on its TID and validated (class, method, attribute, source LID) or dropped and
// counted (late or duplicate, invalid, a transport status, no header); a fired timer resends until
// the policy's attempts run out, then fails, and one of an earlier attempt does nothing; a late
// answer after a resend completes the request and is no sample (Karn); cancel and retarget.
#include <gtest/gtest.h>

#include <random>

#include "fabric/mad_requests.h"
#include "fake_sender.h"
#include "mad/constants.h"
#include "wire/byte_order.h"

namespace ibat::fabric {
namespace {

using namespace std::chrono_literals;
using Kind = MadRequests::Received::Kind;
using TimerKind = MadRequests::Timeout::Kind;
using test::tid_of;

constexpr core::Lid kSmLid{1};
constexpr core::Lid kOtherLid{9};
constexpr std::uint64_t kSeed = 42;
const core::TimePoint kStart{1s};
const MadExpectation kPathGet{
    .mgmt_class = mad::mgmt_class::kSubnAdm, .method = mad::method::kGetResp, .attr_id = mad::attr::kPathRecord};

RetryPolicy no_jitter(core::Duration timeout, std::uint32_t retries) {
  RetryPolicy p{timeout, retries};
  p.jitter = 0.0;
  return p;
}

OutgoingMad request_to(core::Lid dlid, MadRoute route = MadRoute::sa) {
  OutgoingMad mad;
  mad.route = route;
  mad.dlid = dlid;
  mad.bytes.assign(mad::kMadSize, 0);
  return mad;
}

// The SA's GetResp to `attempt`'s request (its TID's upper half rewritten, as the kernel does).
ReceivedMad answer_to(const MadRequests::Attempt& attempt, core::Lid slid = kSmLid) {
  return test::sa_answer(*attempt.mad, mad::attr::kPathRecord, {}, slid);
}

TEST(MadRequests, TidsFollowTheSeedsFirstDrawAndTheJitterItsNextDrawsInSendOrder) {
  const RetryPolicy policy{200ms, 3};  // +/- 25 %
  std::mt19937_64 rng(kSeed);
  const auto start = static_cast<std::uint32_t>(rng());
  ASSERT_LT(start, 0xFFFFFFFDU) << "pick a seed whose TIDs do not wrap here";
  std::uniform_real_distribution<double> spread(-1.0, 1.0);
  const core::Duration first_timer = policy.attempt_timeout(0, spread(rng));
  const core::Duration second_timer = policy.attempt_timeout(0, spread(rng));
  ASSERT_NE(first_timer, second_timer);

  MadRequests requests(kSeed);
  OutgoingMad short_request = request_to(kSmLid);
  short_request.bytes.clear();
  const MadRequests::Attempt first = requests.submit(std::move(short_request), kPathGet, policy, kStart);
  EXPECT_EQ(first.handle, start + 1);
  EXPECT_EQ(first.attempt, 0U);
  ASSERT_EQ(first.mad->bytes.size(), mad::kMadSize) << "a request without a header is made a whole MAD";
  EXPECT_EQ(tid_of(*first.mad), std::uint64_t{start} + 1) << "the TID written, its upper 32 bits the kernel's";
  EXPECT_EQ(first.fires, kStart + first_timer);
  EXPECT_EQ(first.mad->timeout_ms, MadAttempts{}.kernel_wait_ms(policy)) << "the kernel waits for every attempt";

  const MadRequests::Attempt second = requests.submit(request_to(kSmLid), kPathGet, policy, kStart + 1ms);
  EXPECT_EQ(second.handle, start + 2);
  EXPECT_EQ(second.fires, kStart + 1ms + second_timer);
  EXPECT_EQ(requests.outstanding(), 2U);
  EXPECT_EQ(requests.counters().sent, 2U);
  EXPECT_EQ(requests.counters().remote_sent, 2U);
  EXPECT_EQ(requests.counters().local_sent, 0U);
  requests.send_failed();
  EXPECT_EQ(requests.counters().send_failures, 1U);
}

TEST(MadRequests, TidsWrapSkippingZeroAndOutstandingOnes) {
  const RetryPolicy policy = no_jitter(200ms, 3);
  MadRequests requests(kSeed);
  requests.continue_tids_after(0xFFFFFFFEU);
  EXPECT_EQ(requests.submit(request_to(kSmLid), kPathGet, policy, kStart).handle, 0xFFFFFFFFU);
  EXPECT_EQ(requests.submit(request_to(kSmLid), kPathGet, policy, kStart).handle, 1U) << "0 is no TID";
  EXPECT_EQ(requests.submit(request_to(kSmLid), kPathGet, policy, kStart).handle, 2U);

  requests.continue_tids_after(0);
  EXPECT_EQ(requests.submit(request_to(kSmLid), kPathGet, policy, kStart).handle, 3U) << "1 and 2 are outstanding";

  ASSERT_TRUE(requests.cancel(1));
  requests.continue_tids_after(0xFFFFFFFEU);
  EXPECT_EQ(requests.submit(request_to(kSmLid), kPathGet, policy, kStart).handle, 1U)
      << "0xFFFFFFFF outstanding, 0 none: 1, free again";
  EXPECT_EQ(requests.outstanding(), 4U);
}

TEST(MadRequests, AnAnswerCompletesItsRequestAndAnotherWithItsTidIsADuplicate) {
  MadRequests requests(kSeed);
  const MadRequests::Attempt sent = requests.submit(request_to(kSmLid), kPathGet, no_jitter(200ms, 3), kStart);
  const MadRequests::Attempt other = requests.submit(request_to(kSmLid), kPathGet, no_jitter(200ms, 3), kStart);
  const ReceivedMad answer = answer_to(sent);
  const std::uint64_t tid = tid_of(*sent.mad);

  const MadRequests::Received got = requests.on_receive(answer, kStart + 3ms);
  ASSERT_EQ(got.kind, Kind::answered);
  EXPECT_TRUE(got.heard());
  EXPECT_EQ(got.handle, sent.handle);
  EXPECT_EQ(got.answer.header.tid, test::rewritten_tid(tid));
  EXPECT_EQ(got.answer.bytes.data(), answer.bytes.data()) << "the received bytes, not a copy";
  EXPECT_EQ(got.answer.length, answer.length);
  EXPECT_EQ(requests.outstanding(), 1U);

  const MadRequests::Received again = requests.on_receive(answer, kStart + 4ms);
  EXPECT_EQ(again.kind, Kind::late_or_duplicate);
  EXPECT_TRUE(again.heard());
  EXPECT_EQ(requests.counters().late_or_duplicate, 1U);

  ReceivedMad unknown = answer_to(other);
  wire::put64(unknown.bytes, 8, test::rewritten_tid(other.handle + 1000));
  EXPECT_EQ(requests.on_receive(unknown, kStart + 5ms).kind, Kind::late_or_duplicate);
  EXPECT_EQ(requests.counters().late_or_duplicate, 2U);
  EXPECT_EQ(requests.counters().invalid_responses, 0U);
  EXPECT_EQ(requests.counters().received, 3U);
  EXPECT_EQ(requests.outstanding(), 1U) << "the other request still waits";
}

TEST(MadRequests, AResponseFailingValidationCountsInvalidAndItsRequestWaits) {
  MadRequests requests(kSeed);
  const MadRequests::Attempt sent = requests.submit(request_to(kSmLid), kPathGet, no_jitter(200ms, 3), kStart);
  const ReceivedMad genuine = answer_to(sent);

  ReceivedMad wrong_class = genuine;
  wrong_class.bytes[1] = mad::mgmt_class::kSubnLidRouted;
  ReceivedMad wrong_method = genuine;
  wrong_method.bytes[3] = mad::method::kGetTableResp;
  ReceivedMad wrong_attr = genuine;
  wire::put16(wrong_attr.bytes, 16, mad::attr::kNodeRecord);
  ReceivedMad wrong_lid = genuine;
  wrong_lid.slid = kOtherLid;

  std::uint64_t invalid = 0;
  for (const ReceivedMad* forged : {&wrong_class, &wrong_method, &wrong_attr, &wrong_lid}) {
    const MadRequests::Received got = requests.on_receive(*forged, kStart + 1ms);
    EXPECT_EQ(got.kind, Kind::invalid);
    EXPECT_EQ(got.handle, sent.handle);
    EXPECT_TRUE(got.heard());
    EXPECT_EQ(requests.counters().invalid_responses, ++invalid);
    EXPECT_EQ(requests.outstanding(), 1U) << "the real answer may still come";
  }
  EXPECT_EQ(requests.counters().late_or_duplicate, 0U);
  EXPECT_EQ(requests.on_receive(genuine, kStart + 2ms).kind, Kind::answered);
  EXPECT_EQ(requests.outstanding(), 0U);
}

TEST(MadRequests, WithoutTheSourceLidCheckAnAnswerFromAnotherLidIsTaken) {
  MadExpectation any_source = kPathGet;
  any_source.check_source_lid = false;
  MadRequests requests(kSeed);
  const MadRequests::Attempt sent = requests.submit(request_to(kSmLid), any_source, no_jitter(200ms, 3), kStart);
  const MadRequests::Received got = requests.on_receive(answer_to(sent, kOtherLid), kStart + 1ms);
  EXPECT_EQ(got.kind, Kind::answered);
  EXPECT_EQ(requests.counters().invalid_responses, 0U);
}

TEST(MadRequests, ATransportStatusIsDroppedUncountedAndTheRequestWaits) {
  MadRequests requests(kSeed);
  const MadRequests::Attempt sent = requests.submit(request_to(kSmLid), kPathGet, no_jitter(200ms, 3), kStart);
  const ReceivedMad genuine = answer_to(sent);
  ReceivedMad unanswered = genuine;
  unanswered.status = 110;  // ETIMEDOUT: the kernel's wait for the send ended
  const MadRequests::Received got = requests.on_receive(unanswered, kStart + 1ms);
  EXPECT_EQ(got.kind, Kind::send_status);
  EXPECT_FALSE(got.heard()) << "nothing came from the SA";
  EXPECT_EQ(requests.counters().received, 1U);
  EXPECT_EQ(requests.counters().invalid_responses, 0U);
  EXPECT_EQ(requests.counters().late_or_duplicate, 0U);
  EXPECT_EQ(requests.outstanding(), 1U);
  EXPECT_EQ(requests.on_receive(genuine, kStart + 2ms).kind, Kind::answered);
}

TEST(MadRequests, AMadWithoutAHeaderCountsInvalid) {
  MadRequests requests(kSeed);
  const MadRequests::Attempt sent = requests.submit(request_to(kSmLid), kPathGet, no_jitter(200ms, 3), kStart);
  ReceivedMad cut = answer_to(sent);
  cut.bytes.resize(mad::kMadHeaderSize - 1);
  cut.length = cut.bytes.size();
  const MadRequests::Received got = requests.on_receive(cut, kStart + 1ms);
  EXPECT_EQ(got.kind, Kind::undecodable);
  EXPECT_FALSE(got.heard());
  EXPECT_EQ(requests.counters().invalid_responses, 1U);
  EXPECT_EQ(requests.outstanding(), 1U);
}

TEST(MadRequests, ARequestCarryingAnOutstandingTidIsNoAnswer) {
  MadRequests requests(kSeed);
  const MadRequests::Attempt sent = requests.submit(request_to(kSmLid), kPathGet, no_jitter(200ms, 3), kStart);
  ReceivedMad request = answer_to(sent);
  request.bytes[3] = mad::method::kGet;
  const MadRequests::Received got = requests.on_receive(request, kStart + 1ms);
  EXPECT_EQ(got.kind, Kind::not_a_response);
  EXPECT_FALSE(got.heard());
  EXPECT_EQ(requests.counters().received, 1U);
  EXPECT_EQ(requests.counters().invalid_responses + requests.counters().late_or_duplicate, 0U);
  EXPECT_EQ(requests.outstanding(), 1U);
}

// A 0-hop directed-route SMP is not timed, so its timers are the policy's alone: 200, 400, 800 ms.
TEST(MadRequests, AFiredTimerResendsUntilThePolicysAttemptsRunOutThenFails) {
  MadRequests requests(kSeed);
  const MadExpectation node_info{
      .mgmt_class = mad::mgmt_class::kSubnDirectedRoute, .method = mad::method::kGetResp, .attr_id = mad::attr::kNodeInfo};
  const MadRequests::Attempt first =
      requests.submit(request_to(core::Lid{0xFFFF}, MadRoute::smi_directed), node_info, no_jitter(200ms, 2), kStart);
  const std::uint64_t tid = tid_of(*first.mad);
  EXPECT_EQ(first.fires, kStart + 200ms);

  const MadRequests::Timeout one = requests.on_timer(first.handle, 0, first.fires);
  ASSERT_EQ(one.kind, TimerKind::resend);
  EXPECT_FALSE(one.remote()) << "to the own port";
  EXPECT_EQ(one.attempt_sent, kStart);
  EXPECT_EQ(one.resend.handle, first.handle);
  EXPECT_EQ(one.resend.attempt, 1U);
  EXPECT_EQ(tid_of(*one.resend.mad), tid) << "every attempt carries the request's TID";
  EXPECT_EQ(one.resend.fires, first.fires + 400ms);
  EXPECT_EQ(one.resend.mad->timeout_ms, 400U + 800U) << "the kernel waits for the remaining attempts";

  const MadRequests::Timeout two = requests.on_timer(first.handle, 1, one.resend.fires);
  ASSERT_EQ(two.kind, TimerKind::resend);
  EXPECT_EQ(two.resend.attempt, 2U);
  EXPECT_EQ(two.resend.fires, one.resend.fires + 800ms);

  const MadRequests::Timeout last = requests.on_timer(first.handle, 2, two.resend.fires);
  EXPECT_EQ(last.kind, TimerKind::failed);
  EXPECT_EQ(last.attempt_sent, one.resend.fires);
  EXPECT_EQ(requests.outstanding(), 0U);
  EXPECT_EQ(requests.counters().sent, 3U);
  EXPECT_EQ(requests.counters().local_sent, 3U);
  EXPECT_EQ(requests.counters().timeouts, 3U);
  EXPECT_EQ(requests.counters().retries, 2U);
  EXPECT_EQ(requests.round_trip(mad::mgmt_class::kSubnDirectedRoute, core::Lid{0xFFFF}), nullptr) << "not timed";
}

TEST(MadRequests, ATimerOfAnEarlierAttemptOrAGoneRequestDoesNothing) {
  MadRequests requests(kSeed);
  const MadRequests::Attempt first = requests.submit(request_to(kSmLid), kPathGet, no_jitter(200ms, 3), kStart);
  ASSERT_EQ(requests.on_timer(first.handle, 0, first.fires).kind, TimerKind::resend);

  const MadRequests::Timeout stale = requests.on_timer(first.handle, 0, first.fires + 1ms);
  EXPECT_EQ(stale.kind, TimerKind::stale);
  EXPECT_FALSE(stale.remote()) << "no timeout to report";
  EXPECT_EQ(requests.on_timer(first.handle + 1, 1, first.fires + 1ms).kind, TimerKind::stale);
  EXPECT_EQ(requests.counters().timeouts, 1U);
  EXPECT_EQ(requests.counters().retries, 1U);
  EXPECT_EQ(requests.counters().sent, 2U);
  EXPECT_EQ(requests.outstanding(), 1U);
  EXPECT_EQ(requests.on_timer(first.handle, 1, first.fires + 1s).kind, TimerKind::resend) << "attempt 1's timer runs";
}

TEST(MadRequests, ARemoteTimeoutNamesTheAttemptAndBacksOffItsManagersTimer) {
  MadRequests requests(kSeed);
  const MadRequests::Attempt first = requests.submit(request_to(kSmLid), kPathGet, no_jitter(200ms, 3), kStart);
  EXPECT_EQ(requests.round_trip(mad::mgmt_class::kSubnAdm, kSmLid), nullptr);
  const MadRequests::Timeout timeout = requests.on_timer(first.handle, 0, first.fires);
  EXPECT_TRUE(timeout.remote());
  EXPECT_EQ(timeout.route, MadRoute::sa);
  EXPECT_EQ(timeout.dlid, kSmLid);
  EXPECT_EQ(timeout.attempt_sent, kStart);
  EXPECT_EQ(requests.counters().remote_sent, 2U);
  const RoundTripEstimate* sa = requests.round_trip(mad::mgmt_class::kSubnAdm, kSmLid);
  ASSERT_NE(sa, nullptr);
  EXPECT_EQ(sa->timer_floor(), 400ms) << "twice the timer that fired";
}

// Attempt 0 lost in time: its timer fires, the resend goes out, then attempt 0's answer comes. It
// completes the request, and is no sample of the SA's round trip (Karn); a first attempt's is.
TEST(MadRequests, ALateAnswerAfterAResendCompletesTheRequestAndTimesNothing) {
  MadRequests requests(kSeed);
  const MadRequests::Attempt first = requests.submit(request_to(kSmLid), kPathGet, no_jitter(200ms, 3), kStart);
  const MadRequests::Timeout resent = requests.on_timer(first.handle, 0, first.fires);
  ASSERT_EQ(resent.kind, TimerKind::resend);
  const RoundTripEstimate* sa = requests.round_trip(mad::mgmt_class::kSubnAdm, kSmLid);
  ASSERT_NE(sa, nullptr);
  const core::Duration backed_off = sa->timer_floor();

  const MadRequests::Received late = requests.on_receive(answer_to(resent.resend), first.fires + 50ms);
  EXPECT_EQ(late.kind, Kind::answered);
  EXPECT_EQ(late.handle, first.handle);
  EXPECT_EQ(requests.outstanding(), 0U);
  EXPECT_EQ(requests.on_timer(first.handle, 1, resent.resend.fires).kind, TimerKind::stale) << "complete";
  EXPECT_EQ(sa->srtt(), 0ns) << "no sample";
  EXPECT_EQ(sa->timer_floor(), backed_off) << "still backed off";

  const MadRequests::Attempt next = requests.submit(request_to(kSmLid), kPathGet, no_jitter(200ms, 3), kStart + 1s);
  ASSERT_EQ(requests.on_receive(answer_to(next), kStart + 1s + 30ms).kind, Kind::answered);
  EXPECT_EQ(sa->srtt(), 30ms) << "a first attempt's answer is a sample";
}

TEST(MadRequests, AGetTablesFirstAnswerTimesItsKindNotTheRoundTrip) {
  const MadExpectation nodes{
      .mgmt_class = mad::mgmt_class::kSubnAdm, .method = mad::method::kGetTableResp, .attr_id = mad::attr::kNodeRecord};
  MadRequests requests(kSeed);
  const MadRequests::Attempt sent = requests.submit(request_to(kSmLid), nodes, table_retry_policy(RetryPolicy{}), kStart);
  const std::vector<std::vector<std::uint8_t>> records(2, std::vector<std::uint8_t>(108, 0));
  const ReceivedMad answer = test::table_answer(*sent.mad, mad::attr::kNodeRecord, records, 112, kSmLid);
  EXPECT_EQ(requests.on_receive(answer, kStart + 500ms).kind, Kind::answered);
  EXPECT_NE(requests.table_timer(mad::attr::kNodeRecord, kSmLid), nullptr);
  EXPECT_EQ(requests.table_timer(mad::attr::kPathRecord, kSmLid), nullptr);
  EXPECT_EQ(requests.round_trip(mad::mgmt_class::kSubnAdm, kSmLid), nullptr) << "a table's answer is no GET's round trip";
}

TEST(MadRequests, AnAnswerToACancelledRequestIsLateAndItsTimerDoesNothing) {
  MadRequests requests(kSeed);
  const MadRequests::Attempt sent = requests.submit(request_to(kSmLid), kPathGet, no_jitter(200ms, 3), kStart);
  const ReceivedMad answer = answer_to(sent);
  EXPECT_TRUE(requests.cancel(sent.handle));
  EXPECT_FALSE(requests.cancel(sent.handle)) << "no longer outstanding";
  EXPECT_EQ(requests.outstanding(), 0U);
  EXPECT_EQ(requests.on_timer(sent.handle, 0, sent.fires).kind, TimerKind::stale);
  EXPECT_EQ(requests.counters().timeouts, 0U);
  EXPECT_EQ(requests.on_receive(answer, kStart + 1ms).kind, Kind::late_or_duplicate);
  EXPECT_EQ(requests.counters().late_or_duplicate, 1U);
}

TEST(MadRequests, RetargetMovesTheNextAttemptsOfThatRouteOnly) {
  constexpr core::Lid kNewSm{7};
  const MadExpectation sm_info{
      .mgmt_class = mad::mgmt_class::kSubnLidRouted, .method = mad::method::kGetResp, .attr_id = mad::attr::kSmInfo};
  MadRequests requests(kSeed);
  const MadRequests::Attempt sa = requests.submit(request_to(kSmLid), kPathGet, no_jitter(200ms, 3), kStart);
  const MadRequests::Attempt smp =
      requests.submit(request_to(kSmLid, MadRoute::smi_lid), sm_info, no_jitter(200ms, 3), kStart);
  requests.retarget(MadRoute::sa, kNewSm);

  const MadRequests::Timeout sa_timeout = requests.on_timer(sa.handle, 0, sa.fires);
  ASSERT_EQ(sa_timeout.kind, TimerKind::resend);
  EXPECT_EQ(sa_timeout.resend.mad->dlid, kNewSm);
  EXPECT_EQ(sa_timeout.dlid, kNewSm) << "the timeout names the request's LID as retarget left it";
  const MadRequests::Timeout smp_timeout = requests.on_timer(smp.handle, 0, smp.fires);
  ASSERT_EQ(smp_timeout.kind, TimerKind::resend);
  EXPECT_EQ(smp_timeout.resend.mad->dlid, kSmLid) << "another route keeps its LID";

  EXPECT_EQ(requests.on_receive(answer_to(sa_timeout.resend, kNewSm), sa_timeout.resend.fires - 1ms).kind,
            Kind::answered)
      << "the source LID checked is the new one";
}

}  // namespace
}  // namespace ibat::fabric
