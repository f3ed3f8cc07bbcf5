// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// MadAttempts, scripted time: an answer to an earlier attempt completes the request while a resend
// waits; attempts back off and the last one's timer fails the request; the jitter stays within the
// policy's bounds and is drawn from the caller's rng; the kernel waits until the last attempt can end.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "fabric/mad_attempts.h"

namespace ibat::fabric {
namespace {

using namespace std::chrono_literals;

const core::TimePoint kStart{1s};

RetryPolicy no_jitter(core::Duration timeout, std::uint32_t retries) {
  RetryPolicy p{timeout, retries};
  p.jitter = 0.0;
  return p;
}

TEST(MadAttempts, AnAnswerToAnEarlierAttemptCompletesTheRequestWhileTheResendWaits) {
  const RetryPolicy policy = no_jitter(200ms, 3);
  std::mt19937_64 rng(1);
  MadAttempts mad;
  const core::TimePoint first = mad.send(kStart, policy, rng);
  EXPECT_EQ(first, kStart + 200ms);
  EXPECT_EQ(mad.kernel_wait_ms(policy), 3'000U) << "the kernel matches attempt 0's answers until attempt 3 can end";
  ASSERT_TRUE(mad.timed_out(policy));
  EXPECT_EQ(mad.deadline(), MadAttempts::kNoTimer);
  EXPECT_EQ(mad.send(first, policy, rng), first + 400ms);
  // Attempt 0's answer, 300 ms after it went: the same TID, so it is the request's.
  const AttemptAnswer answer = mad.answered(kStart + 300ms);
  EXPECT_EQ(answer.attempt, 1U) << "the running attempt: which send it answers cannot be told";
  EXPECT_EQ(answer.round_trip, 100ms) << "from the running attempt's send";
  EXPECT_EQ(mad.deadline(), MadAttempts::kNoTimer) << "complete: no timer runs";
}

TEST(MadAttempts, APromptAnswerToTheFirstAttemptIsItsRoundTrip) {
  const RetryPolicy policy{200ms, 3};
  std::mt19937_64 rng(1);
  MadAttempts mad;
  mad.send(kStart, policy, rng);
  const AttemptAnswer answer = mad.answered(kStart + 3ms);
  EXPECT_EQ(answer.attempt, 0U);
  EXPECT_EQ(answer.round_trip, 3ms);
}

// 200, 400, 800, 1,600 ms, then the 8 x cap; the fifth resend's timer fails the request.
TEST(MadAttempts, UnansweredAttemptsBackOffAndTheLastTimerFailsTheRequest) {
  const RetryPolicy policy = no_jitter(200ms, 5);
  std::mt19937_64 rng(1);
  MadAttempts mad;
  core::TimePoint now = kStart;
  std::vector<core::Duration> timers;
  for (;;) {
    const core::TimePoint fires = mad.send(now, policy, rng);
    EXPECT_EQ(mad.sent(), now);
    EXPECT_EQ(mad.deadline(), fires);
    timers.push_back(fires - now);
    now = fires;
    if (!mad.timed_out(policy)) break;
  }
  EXPECT_EQ(timers, (std::vector<core::Duration>{200ms, 400ms, 800ms, 1600ms, 1600ms, 1600ms}));
  EXPECT_EQ(mad.attempt(), 5U) << "the last attempt stays the running one";
  EXPECT_EQ(mad.deadline(), MadAttempts::kNoTimer);
}

// Each attempt waits by the policy as it stands when it goes (MadTimers may have raised its floor).
TEST(MadAttempts, EachAttemptWaitsByThePolicyItIsSentWith) {
  RetryPolicy policy = no_jitter(200ms, 3);
  std::mt19937_64 rng(1);
  MadAttempts mad;
  mad.send(kStart, policy, rng);
  ASSERT_TRUE(mad.timed_out(policy));
  policy.floor = 2s;
  EXPECT_EQ(mad.send(kStart + 200ms, policy, rng), kStart + 2200ms);
}

// Attempt 0 at 200 ms +/- 25 %: every draw within [150, 250] ms, both ends nearly reached; the same
// seed gives the same timers (the simulator's runs repeat).
TEST(MadAttempts, TheJitterStaysWithinThePolicysBoundsAndComesFromTheCallersRng) {
  const RetryPolicy policy{200ms, 3};
  std::mt19937_64 rng(7);
  std::mt19937_64 again(7);
  core::Duration least = 1h;
  core::Duration most{0};
  for (int i = 0; i < 2'000; ++i) {
    MadAttempts mad;
    MadAttempts twin;
    const core::Duration timer = mad.send(kStart, policy, rng) - kStart;
    ASSERT_EQ(twin.send(kStart, policy, again) - kStart, timer);
    least = std::min(least, timer);
    most = std::max(most, timer);
  }
  EXPECT_GE(least, 150ms);
  EXPECT_LE(most, 250ms);
  EXPECT_LT(least, 155ms);
  EXPECT_GT(most, 245ms);
}

TEST(MadAttempts, TheKernelWaitsUntilTheLastAttemptCanEnd) {
  const RetryPolicy policy{200ms, 3};  // +/- 25 %: 250, 500, 1,000, 2,000 ms at the longest
  std::mt19937_64 rng(1);
  MadAttempts mad;
  mad.send(kStart, policy, rng);
  EXPECT_EQ(mad.kernel_wait_ms(policy), 3'750U);
  for (std::uint32_t k = 1; k <= 3; ++k) ASSERT_TRUE(mad.timed_out(policy));
  EXPECT_EQ(mad.kernel_wait_ms(policy), 2'000U) << "the last attempt: its own longest timer";
  EXPECT_EQ(MadAttempts{}.kernel_wait_ms(RetryPolicy{1us, 0}), 1U) << "rounded up to whole milliseconds";
}

}  // namespace
}  // namespace ibat::fabric
