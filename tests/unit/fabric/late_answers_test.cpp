// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Late answers: an answer that comes after its request was resent. The resend rule and the timers
// with scripted time (MadAttempts, MadTimers): the late answer completes the request once and times
// nothing. SaClient's late answers, after a GET or GetTable failed, are SaClientTableTest's
// (sa_client_table_test.cpp). What fabric.loss and faults.loss show on the lab only as totals
// (docs/fabric.md, "What the unit tests show without a lab").
#include <gtest/gtest.h>

#include <random>

#include "fabric/mad_attempts.h"
#include "fabric/mad_timers.h"
#include "mad/constants.h"

namespace ibat::fabric {
namespace {

using namespace std::chrono_literals;

constexpr core::Lid kSmLid{1};
const core::TimePoint kStart{1s};

// Attempt 0 lost in time: its timer fires, the resend goes out, then attempt 0's answer comes. It
// completes the request (one TID), names the running attempt, and is no sample of the SA's round
// trip (Karn); the timeout's back-off stays until a first attempt is answered.
TEST(LateAnswers, AnAnswerAfterTheResendCompletesOnceAndTimesNothing) {
  RetryPolicy policy{200ms, 3};
  policy.jitter = 0.0;
  const TimedRequest get{.remote = true, .mgmt_class = mad::mgmt_class::kSubnAdm, .attr_id = 0, .table = false,
                         .dlid = kSmLid};
  MadTimers timers;
  std::mt19937_64 rng(1);
  MadAttempts mad;
  const core::TimePoint fired = mad.send(kStart, timers.policy_now(get, policy), rng);
  ASSERT_TRUE(mad.timed_out(policy));
  timers.on_timeout(get, fired - mad.sent(), fired);
  const core::TimePoint resend_fires = mad.send(fired, timers.policy_now(get, policy), rng);
  EXPECT_GT(resend_fires - fired, 200ms) << "the resend waits longer";

  const AttemptAnswer late = mad.answered(fired + 50ms);  // attempt 0's answer, 250 ms after it went
  EXPECT_EQ(late.attempt, 1U);
  EXPECT_EQ(late.round_trip, 50ms) << "from the resend: not the SA's round trip";
  EXPECT_EQ(mad.deadline(), MadAttempts::kNoTimer) << "complete: the resend's timer is void";
  timers.on_answer(get, late.attempt, late.round_trip, 0, fired + 50ms);
  ASSERT_NE(timers.round_trip(mad::mgmt_class::kSubnAdm, kSmLid), nullptr);
  EXPECT_EQ(timers.round_trip(mad::mgmt_class::kSubnAdm, kSmLid)->srtt(), 0ns) << "no sample";
  EXPECT_GT(timers.policy_now(get, policy).attempt_timeout(0, 0.0), 200ms) << "still backed off";

  // The next request's first attempt answered in 30 ms: that is a sample.
  MadAttempts next;
  next.send(resend_fires, timers.policy_now(get, policy), rng);
  const AttemptAnswer prompt = next.answered(resend_fires + 30ms);
  timers.on_answer(get, prompt.attempt, prompt.round_trip, 0, resend_fires + 30ms);
  EXPECT_EQ(timers.round_trip(mad::mgmt_class::kSubnAdm, kSmLid)->srtt(), 30ms);
}

}  // namespace
}  // namespace ibat::fabric
