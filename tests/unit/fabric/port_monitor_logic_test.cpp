// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PortMonitorLogic alone, driven by scripted events with the time passed in (no loop, no MADs):
// the SM fine, gone and back, an SM change and its refresh, timeouts while the SA answers others,
// timeouts while the SM is fine, and the settings ibatd and ibat-sim derive from the options.
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "fabric/port_monitor_logic.h"

namespace ibat::fabric {
namespace {

using namespace std::chrono_literals;

core::TimePoint at(core::Duration d) { return core::TimePoint{} + d; }

// fabric.poll_interval_ms 1 s, sm_check_interval_s 60, mad_timeout 200 ms, sm_refresh_spread 2 s.
MonitorSettings settings(bool port_events) { return MonitorSettings::of(1s, 60s, 200ms, 2s, port_events); }

// A daemon started at 0 that found the SM MASTER at its first check and has both trap
// subscriptions confirmed.
PortMonitorLogic settled_daemon(bool port_events = false) {
  PortMonitorLogic logic(settings(port_events), 7);
  logic.start(at(0s));
  EXPECT_EQ(logic.begin_check(at(0s), true), CheckMad::sm_info);
  EXPECT_EQ(logic.check(), SmCheck::full);
  EXPECT_EQ(logic.sm_info_answered(at(0s), true), CheckMad::none) << "no subscription to check yet";
  logic.subscription_confirmed();
  logic.subscription_confirmed();
  return logic;
}

TEST(PortMonitorLogicTest, SettingsFollowWhetherHcaEventsAreLive) {
  const MonitorSettings without = settings(false);
  EXPECT_EQ(without.routine, 60s);
  EXPECT_EQ(without.refresh_spread, 0s) << "a restart within the spread would go unseen";
  const MonitorSettings with = settings(true);
  EXPECT_EQ(with.routine, 0s) << "CLIENT_REREGISTER tells of every restart";
  EXPECT_EQ(with.refresh_spread, 2s);
  // Each check MAD waits min(mad_timeout, poll / 4), and is sent once more.
  EXPECT_EQ(with.check_policy.timeout, 200ms);
  EXPECT_EQ(with.check_policy.retries, 1U);
  EXPECT_EQ(MonitorSettings::of(400ms, 60s, 200ms, 2s, true).check_policy.timeout, 100ms);
}

TEST(PortMonitorLogicTest, SmFineOneRoutineSubscriptionCheckPerInterval) {
  PortMonitorLogic logic = settled_daemon();
  EXPECT_EQ(logic.check(), SmCheck::none);
  const core::TimePoint due = logic.next_check_due();
  EXPECT_GE(due, at(60s));
  EXPECT_LT(due, at(90s));
  EXPECT_EQ(logic.begin_check(due - 1s, true), CheckMad::none);
  EXPECT_EQ(logic.begin_check(due, true), CheckMad::subscription) << "one MAD, to the SA";
  EXPECT_EQ(logic.check(), SmCheck::routine);
  EXPECT_EQ(logic.subscription_answered(due, true), CheckMad::none);
  EXPECT_GE(logic.next_check_due(), due + 60s);
}

TEST(PortMonitorLogicTest, RoutineCheckTheSaDidNotSettleAsksTheSm) {
  PortMonitorLogic logic = settled_daemon();
  core::TimePoint due = logic.next_check_due();
  ASSERT_EQ(logic.begin_check(due, true), CheckMad::subscription);
  EXPECT_EQ(logic.subscription_answered(due, std::nullopt), CheckMad::sm_info) << "unanswered";
  EXPECT_EQ(logic.sm_info_answered(due, true), CheckMad::none);
  due = logic.next_check_due();
  ASSERT_EQ(logic.begin_check(due, true), CheckMad::subscription);
  EXPECT_EQ(logic.subscription_answered(due, false), CheckMad::sm_info) << "the SA forgot us";
}

TEST(PortMonitorLogicTest, SmGoneIsAskedEveryPollUntilItIsBack) {
  PortMonitorLogic logic = settled_daemon();
  // A GET sent at 10 s timed out, nothing heard from the SM's LID since: a full check next poll.
  EXPECT_TRUE(logic.remote_timeout(at(10s)));
  EXPECT_EQ(logic.next_check_due(), at(500ms)) << "one poll after the last check (less half a poll)";
  EXPECT_EQ(logic.begin_check(at(11s), true), CheckMad::sm_info);
  EXPECT_EQ(logic.check(), SmCheck::full);
  EXPECT_EQ(logic.sm_info_answered(at(11s), std::nullopt), CheckMad::none) << "no SMInfo: no subscription check";
  for (auto t = 12s; t < 16s; t += 1s) {
    EXPECT_EQ(logic.begin_check(at(t), true), CheckMad::sm_info) << "unsettled: again at " << t.count();
    EXPECT_EQ(logic.sm_info_answered(at(t), std::nullopt), CheckMad::none);
  }
  // Back: MASTER, then the subscription check; settled, quiet until the routine check.
  EXPECT_EQ(logic.begin_check(at(16s), true), CheckMad::sm_info);
  EXPECT_EQ(logic.sm_info_answered(at(16s), true), CheckMad::subscription);
  EXPECT_EQ(logic.subscription_answered(at(16s), true), CheckMad::none);
  EXPECT_GE(logic.next_check_due(), at(76s));
}

TEST(PortMonitorLogicTest, NoSmToAskEndsTheCheckUnsettled) {
  PortMonitorLogic logic(settings(true), 3);
  logic.start(at(0s));
  EXPECT_EQ(logic.begin_check(at(0s), false), CheckMad::none);
  EXPECT_EQ(logic.check(), SmCheck::none);
  EXPECT_EQ(logic.begin_check(at(1s), true), CheckMad::sm_info) << "still due";
}

TEST(PortMonitorLogicTest, TimeoutsWhileTheSaAnswersOthersAskNothing) {
  PortMonitorLogic logic = settled_daemon();
  const core::TimePoint routine = logic.next_check_due();
  logic.heard(at(10s) + 5ms);  // an answer to another MAD, after the attempt went out
  EXPECT_FALSE(logic.remote_timeout(at(10s)));
  EXPECT_FALSE(logic.remote_timeout(at(10s) + 5ms)) << "heard at the same instant";
  EXPECT_EQ(logic.next_check_due(), routine);
  EXPECT_TRUE(logic.remote_timeout(at(10s) + 6ms)) << "sent after the last answer";
  EXPECT_LT(logic.next_check_due(), routine);
}

TEST(PortMonitorLogicTest, TimeoutsWhileTheSmIsFineBackOff) {
  PortMonitorLogic logic = settled_daemon(true);  // no routine check to reset the back-off
  std::vector<core::Duration> gaps;
  core::TimePoint last = at(0s);
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(logic.remote_timeout(last + 1ms));
    const core::TimePoint due = logic.next_check_due();
    ASSERT_EQ(logic.begin_check(due, true), CheckMad::sm_info);
    ASSERT_EQ(logic.sm_info_answered(due, true), CheckMad::subscription);
    ASSERT_EQ(logic.subscription_answered(due, true), CheckMad::none);  // a false alarm
    gaps.push_back(due - last);
    last = due;
  }
  // 1, 2, 4, ... polls, each less the half-poll tolerance.
  for (std::size_t i = 1; i < gaps.size(); ++i) EXPECT_EQ(gaps[i] + 500ms, 2 * (gaps[i - 1] + 500ms)) << i;
  // A local change starts again at one poll.
  logic.suspect();
  EXPECT_EQ(logic.next_check_due(), last + 500ms);
}

TEST(PortMonitorLogicTest, SmChangeRefreshesAtOnceWithoutHcaEvents) {
  PortMonitorLogic logic = settled_daemon(false);
  std::mt19937_64 rng(1);
  EXPECT_EQ(logic.sm_changed(at(20s), rng), at(20s));
  EXPECT_TRUE(logic.take_refresh(at(20s)));
  EXPECT_FALSE(logic.take_refresh(at(20s))) << "once";
  // The new SA holds no subscription: the full check asks SMInfo only, until both are confirmed.
  EXPECT_EQ(logic.begin_check(at(21s), true), CheckMad::sm_info);
  EXPECT_EQ(logic.sm_info_answered(at(21s), true), CheckMad::none);
  logic.subscription_confirmed();
  logic.subscription_confirmed();
  logic.suspect();
  EXPECT_EQ(logic.begin_check(at(22s), true), CheckMad::sm_info);
  EXPECT_EQ(logic.sm_info_answered(at(22s), true), CheckMad::subscription);
}

TEST(PortMonitorLogicTest, SmChangeRefreshIsSpreadAndTheLatestChangeWins) {
  std::mt19937_64 rng(2);
  for (int i = 0; i < 50; ++i) {
    PortMonitorLogic logic = settled_daemon(true);
    const core::TimePoint first = logic.sm_changed(at(20s), rng);
    EXPECT_GE(first, at(20s));
    EXPECT_LT(first, at(22s));
    const core::TimePoint second = logic.sm_changed(at(20s) + 10ms, rng);  // a restart in a row
    std::vector<core::TimePoint> refreshed;
    for (const core::TimePoint t : {std::min(first, second), std::max(first, second)}) {
      if (logic.take_refresh(t)) refreshed.push_back(t);
    }
    ASSERT_EQ(refreshed.size(), 1U);
    EXPECT_EQ(refreshed[0], second);
  }
}

TEST(PortMonitorLogicTest, FirstSmRefreshesAtOnceAndARefreshDropsTheSubscriptions) {
  PortMonitorLogic logic = settled_daemon();
  EXPECT_EQ(logic.sm_found(at(5s)), at(5s));
  EXPECT_TRUE(logic.take_refresh(at(5s)));
  const core::TimePoint due = logic.next_check_due();
  EXPECT_EQ(logic.begin_check(due, true), CheckMad::sm_info) << "routine, nothing confirmed to check";
}

}  // namespace
}  // namespace ibat::fabric
