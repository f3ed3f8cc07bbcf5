// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// MadTimers: an attempt's policy is its request's raised to its manager's measured round trip (and
// a GetTable's to its kind's TableTimer, the GETs' round trip as the queue); only answers to first
// attempts are samples (Karn), single MADs of their manager's round trip, GetTables of their kind's
// records; a timeout backs off what it times; MADs to the own port are neither timed nor raised.
#include <gtest/gtest.h>

#include "fabric/mad_timers.h"

namespace ibat::fabric {
namespace {

using namespace std::chrono_literals;

core::TimePoint at(core::Duration d) { return core::TimePoint(d); }

constexpr core::Lid kSmLid{7};
constexpr std::uint8_t kSa = 0x03;  // SubnAdm
constexpr std::uint8_t kSm = 0x01;  // SubnMgmt, LID-routed (SMInfo)
constexpr std::uint16_t kPaths = 0x35;
constexpr std::uint16_t kSwitches = 0x11;

constexpr TimedRequest get{.remote = true, .mgmt_class = kSa, .attr_id = kPaths, .table = false, .dlid = kSmLid};
constexpr TimedRequest sm_info{.remote = true, .mgmt_class = kSm, .attr_id = 0x20, .table = false, .dlid = kSmLid};
constexpr TimedRequest paths{.remote = true, .mgmt_class = kSa, .attr_id = kPaths, .table = true, .dlid = kSmLid};
constexpr TimedRequest switches{.remote = true, .mgmt_class = kSa, .attr_id = kSwitches, .table = true, .dlid = kSmLid};

const RetryPolicy kGet{200ms, 3};

TEST(MadTimers, NothingMeasuredLeavesEveryPolicyAsGiven) {
  const MadTimers t;
  EXPECT_EQ(t.policy_now(get, kGet).attempt_timeout(0, 0.0), 200ms);
  EXPECT_EQ(t.policy_now(paths, table_retry_policy(kGet)).attempt_timeout(0, 0.0), 4s);
  EXPECT_EQ(t.round_trip(kSa, kSmLid), nullptr);
  EXPECT_EQ(t.table_timer(kPaths, kSmLid), nullptr);
}

TEST(MadTimers, OnlyAnAnswerToTheFirstAttemptIsASample) {
  MadTimers t;
  t.on_answer(get, 1, 900ms, 0, at(10s));
  EXPECT_EQ(t.round_trip(kSa, kSmLid), nullptr) << "an answer after a resend may be either send's (Karn)";
  EXPECT_EQ(t.policy_now(get, kGet).attempt_timeout(0, 0.0), 200ms);
  t.on_answer(get, 0, 300ms, 0, at(20s));
  ASSERT_NE(t.round_trip(kSa, kSmLid), nullptr);
  EXPECT_EQ(t.round_trip(kSa, kSmLid)->srtt(), 300ms);
  EXPECT_EQ(t.policy_now(get, kGet).attempt_timeout(0, 0.0), 600ms) << "twice the round trip";
  EXPECT_EQ(t.policy_now(get, kGet).attempt_timeout(2, 0.0), 800ms) << "the back-off when longer";
}

TEST(MadTimers, EachManagerAndLidHasItsOwnRoundTrip) {
  MadTimers t;
  t.on_answer(sm_info, 0, 50ms, 0, at(30s));
  t.on_answer(get, 0, 400ms, 0, at(40s));
  EXPECT_EQ(t.policy_now(sm_info, kGet).attempt_timeout(0, 0.0), 200ms) << "the SA's queue is not the SM's";
  EXPECT_EQ(t.policy_now(get, kGet).attempt_timeout(0, 0.0), 800ms);
  TimedRequest moved = get;
  moved.dlid = core::Lid{8};
  EXPECT_EQ(t.policy_now(moved, kGet).attempt_timeout(0, 0.0), 200ms) << "an SA at another LID is unknown";
}

TEST(MadTimers, ATimeoutBacksOffItsManagersTimerUntilTheNextSample) {
  MadTimers t;
  t.on_timeout(get, 200ms, at(10s));
  EXPECT_EQ(t.policy_now(get, kGet).attempt_timeout(0, 0.0), 400ms);
  EXPECT_EQ(t.policy_now(sm_info, kGet).attempt_timeout(0, 0.0), 200ms);
  t.on_answer(get, 0, 100ms, 0, at(20s));
  EXPECT_EQ(t.policy_now(get, kGet).attempt_timeout(0, 0.0), 200ms) << "the sample ends the back-off";
}

// 10,000 records in 3.35 s while the GETs took 20 ms: the next path table waits 2 x (20 ms + 3.33 s).
TEST(MadTimers, AGetTableTimesItsKindsRecordsNotTheRoundTrip) {
  MadTimers t;
  t.on_answer(get, 0, 20ms, 0, at(60s));
  t.on_answer(paths, 0, 3350ms, 10'000, at(70s));
  EXPECT_EQ(t.round_trip(kSa, kSmLid)->srtt(), 20ms) << "a table is no sample of the SA's queue";
  ASSERT_NE(t.table_timer(kPaths, kSmLid), nullptr);
  EXPECT_DOUBLE_EQ(t.table_timer(kPaths, kSmLid)->per_record_ns(), 333'000.0);
  EXPECT_EQ(t.policy_now(paths, table_retry_policy(kGet)).attempt_timeout(0, 0.0), 6700ms);
  EXPECT_EQ(t.policy_now(switches, table_retry_policy(kGet)).attempt_timeout(0, 0.0), 4s) << "another kind";
  EXPECT_EQ(t.policy_now(get, kGet).attempt_timeout(0, 0.0), 200ms);
  t.on_answer(paths, 1, 60s, 10, at(80s));
  EXPECT_DOUBLE_EQ(t.table_timer(kPaths, kSmLid)->per_record_ns(), 333'000.0) << "Karn for tables too";
}

TEST(MadTimers, ATableIsRaisedToItsManagersRoundTripToo) {
  MadTimers t;
  t.on_timeout(get, 4s, at(90s));  // the GETs' timer backs off to 8 s, above the table's fixed 4 s
  EXPECT_EQ(t.policy_now(paths, table_retry_policy(kGet)).attempt_timeout(0, 0.0), 8s);
}

TEST(MadTimers, ATableTimeoutBacksOffItsKindOnly) {
  MadTimers t;
  t.on_timeout(paths, 4s, at(100s));
  EXPECT_EQ(t.round_trip(kSa, kSmLid), nullptr) << "a table's long timer says more of an SA gone than of its queue";
  EXPECT_EQ(t.policy_now(paths, table_retry_policy(kGet)).attempt_timeout(0, 0.0), 8s);
  EXPECT_EQ(t.policy_now(switches, table_retry_policy(kGet)).attempt_timeout(0, 0.0), 4s);
  EXPECT_EQ(t.policy_now(get, kGet).attempt_timeout(0, 0.0), 200ms);
}

TEST(MadTimers, AMadToTheOwnPortIsNeitherTimedNorRaised) {
  MadTimers t;
  TimedRequest local = get;
  local.remote = false;
  t.on_answer(local, 0, 300ms, 0, at(10s));
  t.on_timeout(local, 200ms, at(20s));
  EXPECT_EQ(t.round_trip(kSa, kSmLid), nullptr);
  t.on_answer(get, 0, 300ms, 0, at(30s));
  EXPECT_EQ(t.policy_now(local, kGet).attempt_timeout(0, 0.0), 200ms);
}

}  // namespace
}  // namespace ibat::fabric
