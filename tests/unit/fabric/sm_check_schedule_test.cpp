// SmCheckSchedule: full checks at start and on suspicion (at most one per half poll interval,
// repeated until settled), routine checks at the slow interval x [1, 1.5), none when it is zero.
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

TEST(SmCheckScheduleTest, ZeroRoutineIntervalMeansNoRoutineChecks) {
  SmCheckSchedule s(1s, 0s, 1);
  s.start(at(0s));
  s.checked(at(0s), SmCheck::full, true);
  EXPECT_EQ(s.due(at(1h)), SmCheck::none);
}

}  // namespace
}  // namespace ibat::fabric
