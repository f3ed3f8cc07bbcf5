// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// RoundTripEstimate: the MAD timer floor that follows a manager's answers (2 x srtt, Karn's
// samples), backs off on timeouts until the next sample, and bounds each attempt from below
// without multiplying the retry back-off.
#include <gtest/gtest.h>

#include "fabric/round_trip_estimate.h"

namespace ibat::fabric {
namespace {

using namespace std::chrono_literals;

core::TimePoint at(core::Duration d) { return core::TimePoint(d); }

TEST(RoundTripEstimate, TheFloorIsTwiceTheSmoothedRoundTripUpToOpenSmsFifoTimeout) {
  RoundTripEstimate e;
  EXPECT_EQ(e.timer_floor(), core::Duration::zero()) << "nothing known: the policy's own timers";
  e.on_sample(300ms, at(1s));
  EXPECT_EQ(e.srtt(), 300ms);
  EXPECT_EQ(e.timer_floor(), 600ms);
  e.on_sample(1100ms, at(2s));  // 1/8 of the way: 300 + 100 ms
  EXPECT_EQ(e.srtt(), 400ms);
  for (int i = 0; i < 100; ++i) e.on_sample(30s, at(3s + i * 1s));
  EXPECT_EQ(e.timer_floor(), RoundTripEstimate::kMaxTimerFloor);
  EXPECT_EQ(RoundTripEstimate::kMaxTimerFloor, 10s) << "OpenSM's max_msg_fifo_timeout";
}

// Behind a queue no first attempt is answered in time: the timeouts alone raise the floor, to
// twice the longest timer that fired, and the next sample brings it back to the round trip.
TEST(RoundTripEstimate, TimeoutsBackTheFloorOffUntilTheNextSample) {
  RoundTripEstimate e;
  e.on_sample(10ms, at(1s));
  e.on_timeout(200ms, at(2s));  // each attempt went out after that sample
  EXPECT_EQ(e.timer_floor(), 400ms);
  e.on_timeout(150ms, at(3s));  // a shorter timer lowers nothing
  EXPECT_EQ(e.timer_floor(), 400ms);
  e.on_timeout(1600ms, at(5s));
  EXPECT_EQ(e.timer_floor(), 3200ms);
  e.on_timeout(8s, at(20s));
  EXPECT_EQ(e.timer_floor(), 10s) << "at most the ceiling";
  e.on_sample(10ms, at(21s));
  EXPECT_EQ(e.timer_floor(), 20ms);
}

// A sample says the manager answers in time: an attempt sent before it that times out later was
// lost by the fabric, and backs nothing off. Without this, a timer armed long in a lossy spell
// put the floor back at the ceiling after the SA had answered promptly again
// (docs/reliability.md, "10 % loss right after 50 %").
TEST(RoundTripEstimate, AnAttemptSentBeforeTheLastSampleBacksNothingOff) {
  RoundTripEstimate e;
  e.on_sample(1ms, at(1s));
  e.on_timeout(8s, at(10s));  // sent at 2 s, after the sample: the floor backs off
  ASSERT_EQ(e.timer_floor(), 10s);
  e.on_sample(1ms, at(11s));  // the SA answers a first attempt in 1 ms
  ASSERT_EQ(e.timer_floor(), 2ms);
  e.on_timeout(8s, at(12s));  // armed at 4 s, during the back-off: lost, not slow
  EXPECT_EQ(e.timer_floor(), 2ms);
  e.on_timeout(8s, at(11s + 1ms));  // sent at 3.001 s: before the sample too
  EXPECT_EQ(e.timer_floor(), 2ms);
  e.on_timeout(200ms, at(11s + 300ms));  // sent at 11.1 s, after it: backs off again
  EXPECT_EQ(e.timer_floor(), 400ms);
}

// The floor is each attempt's least wait, not a new base: a GET's attempts (200, 400, 800, 1600 ms)
// under a 500 ms floor wait 500, 500, 800, 1600 ms (no jitter drawn: spread 0).
TEST(RoundTripEstimate, TheFloorBoundsEachAttemptWithoutMultiplyingTheBackOff) {
  RoundTripEstimate e;
  e.on_sample(250ms, at(1s));
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
