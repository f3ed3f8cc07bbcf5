// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// TableTimer: a GetTable's timer follows the records the SA computes for it at the speed measured
// from earlier tables of its kind (Karn's samples, the GETs' queue taken out), backs off on
// timeouts after the last sample until the next one, and stays at least the fixed table timer.
#include <gtest/gtest.h>

#include "fabric/table_timer.h"

namespace ibat::fabric {
namespace {

using namespace std::chrono_literals;

core::TimePoint at(core::Duration since_start) { return core::TimePoint(since_start); }

TEST(TableTimer, NothingKnownLeavesTheFixedTableTimer) {
  const TableTimer t;
  EXPECT_EQ(t.timer_floor(5ms), core::Duration::zero());
  const RetryPolicy p = t.applied_to(table_retry_policy(RetryPolicy{200ms, 3}), 5ms);
  EXPECT_EQ(p.attempt_timeout(0, 0.0), 4s);
}

// 10,000 records in 3.35 s while the GETs took 20 ms: 333 us a record. The next table of the kind
// is expected as long: it waits 2 x (20 ms + 3.33 s), above the fixed 4 s.
TEST(TableTimer, TheTimerIsTwiceTheQueueAndTheLastTablesRecordsAtTheMeasuredSpeed) {
  TableTimer t;
  t.on_sample(3350ms, 10'000, 20ms, at(100s));
  EXPECT_DOUBLE_EQ(t.per_record_ns(), 333'000.0);
  EXPECT_EQ(t.timer_floor(20ms), 6700ms);
  EXPECT_EQ(t.timer_floor(100ms), 6860ms) << "a longer queue now is waited for too";
  const RetryPolicy p = t.applied_to(table_retry_policy(RetryPolicy{200ms, 3}), 20ms);
  EXPECT_EQ(p.attempt_timeout(0, 0.0), 6700ms);
  EXPECT_EQ(p.attempt_timeout(1, 0.0), 8s) << "the resend's own back-off when longer";
  // A fast SA: the fixed table timer stays the least.
  TableTimer fast;
  fast.on_sample(40ms, 10'000, 5ms, at(200s));
  EXPECT_EQ(fast.applied_to(table_retry_policy(RetryPolicy{200ms, 3}), 5ms).attempt_timeout(0, 0.0), 4s);
}

TEST(TableTimer, SamplesAreAveragedAndTheExpectedLengthIsTheLastTables) {
  TableTimer t;
  t.on_sample(1000ms, 1000, 0ms, at(300s));  // 1 ms a record
  t.on_sample(9000ms, 1000, 0ms, at(400s));  // 9 ms: 1/8 of the way, 2 ms
  EXPECT_DOUBLE_EQ(t.per_record_ns(), 2'000'000.0);
  EXPECT_EQ(t.timer_floor(0ms), 4s);
  t.on_sample(4000ms, 2000, 0ms, at(500s));  // 2 ms again, now 2,000 records
  EXPECT_EQ(t.timer_floor(0ms), 8s);
  t.on_sample(10ms, 0, 0ms, at(600s));  // an empty table computes nothing: the speed stays
  EXPECT_DOUBLE_EQ(t.per_record_ns(), 2'000'000.0);
  EXPECT_EQ(t.timer_floor(0ms), core::Duration::zero()) << "but none is expected";
}

TEST(TableTimer, AnswersFasterThanTheQueueCountNoNegativeWork) {
  TableTimer t;
  t.on_sample(10ms, 100, 50ms, at(700s));
  EXPECT_DOUBLE_EQ(t.per_record_ns(), 0.0);
  EXPECT_EQ(t.timer_floor(50ms), 100ms);
}

// A table no timer fitted yet: each timeout doubles the least wait of the next attempts, so one is
// answered at its first attempt and measured; the sample then sets the timer from the records.
TEST(TableTimer, TimeoutsBackTheFloorOffUntilTheNextSampleUpToTheCeiling) {
  TableTimer t;
  t.on_timeout(4s, at(2000s));
  EXPECT_EQ(t.timer_floor(0ms), 8s);
  t.on_timeout(3s, at(2010s));
  EXPECT_EQ(t.timer_floor(0ms), 8s) << "a shorter timer lowers nothing";
  t.on_timeout(40s, at(2100s));
  EXPECT_EQ(t.timer_floor(0ms), TableTimer::kMaxTimerFloor);
  EXPECT_EQ(TableTimer::kMaxTimerFloor, 60s) << "RFC 6298 (2.5)";
  t.on_sample(5s, 1000, 0ms, at(2200s));
  EXPECT_EQ(t.timer_floor(0ms), 10s);
  t.on_sample(600s, 1000, 0ms, at(2300s));
  EXPECT_EQ(t.timer_floor(0ms), TableTimer::kMaxTimerFloor) << "the records' term is bounded too";
}

// The rule of single MADs (TimerBackoff): a table's attempt armed long during a slow spell that
// fires after another table of its kind was answered in time was lost, not slow.
TEST(TableTimer, AnAttemptSentBeforeTheLastTableBacksNothingOff) {
  TableTimer t;
  t.on_sample(2s, 1000, 0ms, at(10s));  // 2 ms a record: 4 s expected
  t.on_timeout(8s, at(15s));            // sent at 7 s, before that table's answer
  EXPECT_EQ(t.timer_floor(0ms), 4s);
  t.on_timeout(8s, at(19s));  // sent at 11 s, after it: the SA may be slower now
  EXPECT_EQ(t.timer_floor(0ms), 16s);
}

}  // namespace
}  // namespace ibat::fabric
