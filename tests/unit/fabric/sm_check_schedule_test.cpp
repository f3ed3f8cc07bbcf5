// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SmCheckSchedule: full checks at start and on suspicion (at most one per half poll interval,
// repeated until settled), routine checks at the slow interval x [1, 1.5), none when it is zero.
#include <vector>

#include <gtest/gtest.h>

#include "fabric/sm_check_schedule.h"

namespace ibat::fabric {
namespace {

using namespace std::chrono_literals;

core::TimePoint at(core::Duration d) { return core::TimePoint{} + d; }

TEST(SmCheckScheduleTest, StartsWithAFullCheckThenStaysQuiet) {
  SmCheckSchedule s(1s, 60s, 1);
  s.start(at(0s));
  EXPECT_EQ(s.due(at(0s)), SmCheck::full);
  s.checked(at(0s), SmCheck::full, true);
  for (auto t = 1s; t < 60s; t += 1s) EXPECT_EQ(s.due(at(t)), SmCheck::none) << t.count();
}

TEST(SmCheckScheduleTest, RoutineIntervalIsJitteredUpwardOnly) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    SmCheckSchedule s(1s, 60s, seed);
    s.start(at(0s));
    s.checked(at(0s), SmCheck::full, true);
    core::TimePoint t = at(0s);
    while (s.due(t) == SmCheck::none) t += 100ms;
    EXPECT_EQ(s.due(t), SmCheck::routine);
    EXPECT_GE(t, at(60s));
    EXPECT_LT(t, at(90s + 100ms));
  }
}

TEST(SmCheckScheduleTest, RoutineTimesDifferAcrossHosts) {
  auto first_routine = [](std::uint64_t seed) {
    SmCheckSchedule s(1s, 60s, seed);
    s.start(at(0s));
    s.checked(at(0s), SmCheck::full, true);
    core::TimePoint t = at(0s);
    while (s.due(t) == SmCheck::none) t += 100ms;
    return t;
  };
  EXPECT_NE(first_routine(1), first_routine(2));
}

TEST(SmCheckScheduleTest, SuspicionAsksAtTheNextPollAndRepeatsUntilSettled) {
  SmCheckSchedule s(1s, 60s, 1);
  s.start(at(0s));
  s.checked(at(0s), SmCheck::full, true);
  s.suspect();
  EXPECT_EQ(s.due(at(100ms)), SmCheck::none);  // at most one check per half poll interval
  EXPECT_EQ(s.due(at(1s)), SmCheck::full);
  s.checked(at(1s), SmCheck::full, false);  // the SM did not answer as MASTER
  EXPECT_EQ(s.due(at(2s)), SmCheck::full);
  s.checked(at(2s), SmCheck::full, true);
  EXPECT_EQ(s.due(at(3s)), SmCheck::none);
}

TEST(SmCheckScheduleTest, UnsettledRoutineCheckBecomesAFullOne) {
  SmCheckSchedule s(1s, 60s, 1);
  s.start(at(0s));
  s.checked(at(0s), SmCheck::full, true);
  s.checked(at(70s), SmCheck::routine, false);
  EXPECT_EQ(s.due(at(71s)), SmCheck::full);
}

TEST(SmCheckScheduleTest, TimeoutsThatFindNothingBackOffUpToTheRoutineInterval) {
  SmCheckSchedule s(1s, 60s, 1);
  s.start(at(0s));
  s.checked(at(0s), SmCheck::full, true);
  // An overloaded SA: every poll sees a timed-out query, every check finds the SM and SA fine.
  std::vector<core::TimePoint> checks;
  for (auto t = 1s; t <= 300s; t += 1s) {
    s.suspect_timeout();
    if (s.due(at(t)) != SmCheck::full) continue;
    checks.push_back(at(t));
    s.checked(at(t), SmCheck::full, true);
  }
  // 1, 2, 4, ... 32, then every 60 s: not one per poll (300).
  ASSERT_GE(checks.size(), 6U);
  EXPECT_LE(checks.size(), 12U);
  for (std::size_t i = 1; i < checks.size(); ++i) EXPECT_LE(checks[i] - checks[i - 1], 60s);
  EXPECT_EQ(checks[1] - checks[0], 2s);
  EXPECT_EQ(checks[2] - checks[1], 4s);
}

TEST(SmCheckScheduleTest, ALocalChangeOrAFindingEndsTheBackOff) {
  SmCheckSchedule s(1s, 60s, 1);
  s.start(at(0s));
  s.checked(at(0s), SmCheck::full, true);
  auto t = 0s;
  for (int i = 0; i < 4; ++i) {  // four false alarms: the next timeout check waits 16 s
    s.suspect_timeout();
    while (s.due(at(t)) != SmCheck::full) t += 1s;
    s.checked(at(t), SmCheck::full, true);
  }
  s.suspect_timeout();
  EXPECT_EQ(s.due(at(t + 1s)), SmCheck::none);
  s.suspect();  // the port changed: at once
  EXPECT_EQ(s.due(at(t + 1s)), SmCheck::full);
  s.checked(at(t + 1s), SmCheck::full, true);
  s.suspect_timeout();
  EXPECT_EQ(s.due(at(t + 2s)), SmCheck::full);  // the back-off starts again at one poll
  s.checked(at(t + 2s), SmCheck::full, false);  // the SM did not answer: asked every poll
  EXPECT_EQ(s.due(at(t + 3s)), SmCheck::full);
}

TEST(SmCheckScheduleTest, ZeroRoutineIntervalMeansNoRoutineChecks) {
  SmCheckSchedule s(1s, 0s, 1);
  s.start(at(0s));
  s.checked(at(0s), SmCheck::full, true);
  EXPECT_EQ(s.due(at(1h)), SmCheck::none);
}

// next_due() is the first instant due() asks for a check, in every state the schedule passes
// through (ibat-sim schedules its simulated daemons' polls from it).
TEST(SmCheckScheduleTest, NextDueIsTheFirstInstantACheckIsDue) {
  SmCheckSchedule s(1s, 60s, 7);
  auto expect_next_due = [&](const char* state) {
    const core::TimePoint t = s.next_due();
    ASSERT_NE(t, core::TimePoint::max()) << state;
    EXPECT_NE(s.due(t), SmCheck::none) << state;
    EXPECT_EQ(s.due(t - 1ns), SmCheck::none) << state;
  };
  s.start(at(0s));
  expect_next_due("started");
  s.checked(at(0s), SmCheck::full, true);
  expect_next_due("settled: the routine check");
  s.suspect_timeout();
  for (int i = 0; i < 8; ++i) {  // through the back-off, up to the routine interval
    expect_next_due("timeout-suspect");
    s.checked(s.next_due(), SmCheck::full, true);
    s.suspect_timeout();
  }
  s.suspect();
  expect_next_due("suspect");
  s.checked(s.next_due(), SmCheck::full, false);
  expect_next_due("unsettled");
  SmCheckSchedule never(1s, 0s, 1);
  never.start(at(0s));
  never.checked(at(0s), SmCheck::full, true);
  EXPECT_EQ(never.next_due(), core::TimePoint::max());
}

}  // namespace
}  // namespace ibat::fabric
