// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The daemons' port monitor MADs in the simulator: the idle rate of src/fabric (one remote MAD per
// routine check every 60-90 s, one local PortInfo per poll), full checks when remote MADs time
// out, re-subscription after an SM change, none for per-process (no daemon). The rules are
// fabric::PortMonitorLogic's (tested alone in tests/unit/fabric/port_monitor_logic_test.cpp).
#include <gtest/gtest.h>

#include "sim/simulator.h"

namespace ibat::sim {
namespace {

// Nearly idle daemons: a connect per rank every 100 s, an SA that never drops.
Scenario quiet(std::uint32_t nodes, double seconds) {
  Scenario s;
  s.policy.prefetch = core::Prefetch::off;  // GETs only (prefetch_test.cpp has the GetTables)
  s.workload = Workload::churn;
  s.strategy = Strategy::ibat;
  s.nodes = nodes;
  s.ranks = 1;
  s.duration_s = seconds;
  s.connects_per_rank_s = 0.01;
  return s;
}

TEST(Monitor, IdleDaemonsSendOneRemoteMadPerRoutineCheck) {
  const std::uint32_t n = 40;
  const double seconds = 600;
  const RunResult res = Simulator(quiet(n, seconds)).run();
  EXPECT_EQ(res.sa_dropped, 0u);
  EXPECT_EQ(res.monitor_full_checks, 0u);
  EXPECT_EQ(res.monitor_remote_mads, res.monitor_routine_checks);  // one answered MAD each
  EXPECT_EQ(res.sa_queries, res.resolver_sa_queries + res.monitor_remote_mads);
  // Every 60 s x [1, 1.5): between 600/90 - 1 and 600/60 + 1 per node.
  EXPECT_GE(res.monitor_routine_checks, n * 5u);
  EXPECT_LE(res.monitor_routine_checks, n * 11u);
  // One 0-hop PortInfo per 1 s poll, none of them at the SA.
  EXPECT_GE(res.monitor_local_mads, n * 599u);
  EXPECT_LE(res.monitor_local_mads, n * 602u);  // the run ends with its last connect, just after 600 s
}

TEST(Monitor, SlowerRoutineIntervalSendsFewer) {
  Scenario s = quiet(40, 600);
  s.monitor.sm_check_ns = 300'000'000'000;
  const RunResult res = Simulator(s).run();
  EXPECT_LE(res.monitor_routine_checks, 40u * 3);
}

TEST(Monitor, TimedOutQueriesTriggerFullChecksUntilTheSaAnswers) {
  Scenario s = quiet(40, 60);
  s.connects_per_rank_s = 2.0;  // queries in flight when the SA goes away
  s.sa_outage_at_s = 20.0;
  s.sa_outage_s = 3.0;
  const RunResult res = Simulator(s).run();
  EXPECT_GT(res.monitor_full_checks, 0u);
  // Only while the SA is gone: at most one full check per poll per node over ~4 s.
  EXPECT_LE(res.monitor_full_checks, 40u * 6);
  EXPECT_GT(res.monitor_remote_mads, res.monitor_routine_checks);
}

// A MAD timeout below the SA's service time: ibatd's checks wait min(mad_timeout, poll / 4), the
// same 10 us, so they time out as well (ibat-sim's Monitor used to give them 200 ms of their own,
// which ibatd cannot be configured to do, so that every check found the SM fine: 934c316). A check is answered
// only when its first attempt's answer beats its resend's timer; one left unanswered looks like a
// lost SM and repeats at the next poll, so the daemons check far more often than the back-off of
// checks that find the SM fine would (1, 2, 4 ... 32 s, then every 60 s: about 8 per node in 120 s,
// fabric.PortMonitorLogicTest.TimeoutsWhileTheSmIsFineBackOff), yet never more than once a poll.
TEST(Monitor, MadTimeoutBelowTheSaServiceTimeTimesTheChecksOutToo) {
  Scenario s = quiet(40, 120);
  s.connects_per_rank_s = 2.0;
  s.mad_timeout_ns = 10'000;  // below the SA's service time: every path query attempt times out
  s.mad_timers_follow_rtt = false;  // (the checks' round trips would lengthen the GETs' timers)
  const RunResult res = Simulator(s).run();
  EXPECT_GT(res.monitor_timeouts, 0u) << "the checks' attempts time out too";
  EXPECT_GT(res.monitor_full_checks, 40u * 12) << "unanswered checks repeat every poll";
  EXPECT_LE(res.monitor_full_checks, 40u * 121) << "at most one full check a poll";
  EXPECT_GE(res.monitor_local_mads, 40u * 119);  // polled every second all the same
}

TEST(Monitor, SmChangeResubscribesEveryDaemon) {
  Scenario s = quiet(40, 60);
  s.sm_restart_at_s = 20.0;
  const RunResult res = Simulator(s).run();
  // Two InformInfo SETs, the broadcast group, and a full check (SMInfo; the subscription check
  // only once the new subscriptions are confirmed).
  EXPECT_GE(res.monitor_remote_mads, 40u * 4);
  EXPECT_GE(res.monitor_full_checks, 40u);
}

// Every daemon sees the SM change at once; its subscriptions and broadcast-group read go at a
// random time within fabric.sm_refresh_spread_ms, not all in the SA's first 100 ms.
TEST(Monitor, SmChangeRefreshIsSpreadOverItsWindow) {
  auto peak_after_change = [](std::int64_t spread_ns) {
    Scenario s = quiet(400, 30);
    s.sm_restart_at_s = 20.0;
    s.bucket_ns = 100'000'000;
    s.monitor.hca_events = true;  // the spread applies only then (fabric::MonitorSettings::of)
    s.monitor.refresh_spread_ns = spread_ns;
    Simulator sim(s);
    const RunResult res = sim.run();
    EXPECT_GE(res.monitor_remote_mads, 400u * 4);
    return sim.series().peak_sa_qps(20'000'000'000);
  };
  const double at_once = peak_after_change(0);
  const double spread = peak_after_change(2'000'000'000);
  EXPECT_GE(at_once, 400 * 3 / 0.1) << "all three MADs of every daemon in one 100 ms bucket";
  EXPECT_LT(spread, at_once / 4);
}

TEST(Monitor, PerProcessHasNoDaemonToMonitor) {
  Scenario s = quiet(12, 60);
  s.strategy = Strategy::per_process;
  const RunResult res = Simulator(s).run();
  EXPECT_EQ(res.monitor_remote_mads, 0u);
  EXPECT_EQ(res.monitor_local_mads, 0u);
  EXPECT_EQ(res.sa_queries, res.requests);
}

TEST(Monitor, DisabledChangesNothingElse) {
  Scenario on = quiet(30, 120);
  Scenario off = on;
  off.monitor.enabled = false;
  const RunResult a = Simulator(on).run();
  const RunResult b = Simulator(off).run();
  EXPECT_EQ(b.monitor_remote_mads, 0u);
  EXPECT_EQ(a.requests, b.requests);  // the workload's own random draws are not moved
  EXPECT_EQ(a.sa_queries - a.monitor_remote_mads, b.sa_queries);
}

}  // namespace
}  // namespace ibat::sim
