// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// RoundTripEstimate: the MAD timer floor that follows a manager's answers (2 x srtt, Karn's
// samples), backs off on timeouts until the next sample, and bounds each attempt from below
// without multiplying the retry back-off.
#include <gtest/gtest.h>

#include "fabric/round_trip_estimate.h"

namespace ibat::fabric {
namespace {

using namespace std::chrono_literals;

TEST(RoundTripEstimate, TheFloorIsTwiceTheSmoothedRoundTripUpToOpenSmsFifoTimeout) {
  RoundTripEstimate e;
  EXPECT_EQ(e.timer_floor(), core::Duration::zero()) << "nothing known: the policy's own timers";
  e.on_sample(300ms);
  EXPECT_EQ(e.srtt(), 300ms);
  EXPECT_EQ(e.timer_floor(), 600ms);
  e.on_sample(1100ms);  // 1/8 of the way: 300 + 100 ms
  EXPECT_EQ(e.srtt(), 400ms);
  for (int i = 0; i < 100; ++i) e.on_sample(30s);
  EXPECT_EQ(e.timer_floor(), RoundTripEstimate::kMaxTimerFloor);
  EXPECT_EQ(RoundTripEstimate::kMaxTimerFloor, 10s) << "OpenSM's max_msg_fifo_timeout";
}

// Behind a queue no first attempt is answered in time: the timeouts alone raise the floor, to
// twice the longest timer that fired, and the next sample brings it back to the round trip.
TEST(RoundTripEstimate, TimeoutsBackTheFloorOffUntilTheNextSample) {
  RoundTripEstimate e;
  e.on_sample(10ms);
  e.on_timeout(200ms);
  EXPECT_EQ(e.timer_floor(), 400ms);
  e.on_timeout(150ms);  // a shorter timer lowers nothing
  EXPECT_EQ(e.timer_floor(), 400ms);
  e.on_timeout(1600ms);
  EXPECT_EQ(e.timer_floor(), 3200ms);
  e.on_timeout(8s);
  EXPECT_EQ(e.timer_floor(), 10s) << "at most the ceiling";
  e.on_sample(10ms);
  EXPECT_EQ(e.timer_floor(), 20ms);
}

// The floor is each attempt's least wait, not a new base: a GET's attempts (200, 400, 800, 1600 ms)
// under a 500 ms floor wait 500, 500, 800, 1600 ms (no jitter drawn: spread 0).
TEST(RoundTripEstimate, TheFloorBoundsEachAttemptWithoutMultiplyingTheBackOff) {
  RoundTripEstimate e;
  e.on_sample(250ms);
  const RetryPolicy p = e.applied_to(RetryPolicy{200ms, 3});
  EXPECT_EQ(p.timeout, 200ms);
  EXPECT_EQ(p.attempt_timeout(0, 0.0), 500ms);
  EXPECT_EQ(p.attempt_timeout(1, 0.0), 500ms);
  EXPECT_EQ(p.attempt_timeout(2, 0.0), 800ms);
  EXPECT_EQ(p.attempt_timeout(3, 0.0), 1600ms);
  EXPECT_EQ(p.attempt_timeout(0, 1.0), 625ms) << "the jitter applies to the floor too";
}

}  // namespace
}  // namespace ibat::fabric
