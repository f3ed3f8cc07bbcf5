// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The boot workload: N daemons start together with no job and the run ends when every daemon
// holds a path to every other node. With prefetch off each daemon resolves every other node by a
// GET, so a boot costs N(N-1) GETs and at least that much of the SA's time; every daemon's start sends its
// subscriptions, the broadcast group read and a full SM check.
#include <gtest/gtest.h>

#include <stdexcept>

#include "sim/simulator.h"

namespace ibat::sim {
namespace {

Scenario boot(std::uint32_t n) {
  Scenario s;
  s.policy.prefetch = core::Prefetch::off;  // GETs only (prefetch_test.cpp has the GetTables)
  s.workload = Workload::boot;
  s.strategy = Strategy::ibat;
  s.nodes = n;
  return s;
}

TEST(Boot, EveryDaemonEndsHoldingAPathToEveryOtherNode) {
  const std::uint64_t n = 30;
  const RunResult res = Simulator(boot(n)).run();
  EXPECT_EQ(res.failures, 0u);
  EXPECT_EQ(res.requests, n * (n - 1));  // the daemons' own, no ranks
  EXPECT_EQ(res.paths_held, n * (n - 1));
  EXPECT_EQ(res.resolver_sa_queries, n * (n - 1));
  EXPECT_EQ(res.sa_queries - res.monitor_remote_mads, n * (n - 1));  // one GET per pair
  EXPECT_EQ(res.sa_dropped, 0u);
}

TEST(Boot, CostsTheSaOneGetOfWorkPerArrival) {
  const std::uint64_t n = 30;
  const Scenario s = boot(n);
  const RunResult res = Simulator(s).run();
  const double get_s = static_cast<double>(s.sa.work_ns(1)) / 1e9;
  EXPECT_EQ(res.sa_records, res.sa_served);
  EXPECT_NEAR(res.sa_busy_s, static_cast<double>(res.sa_served) * get_s, 1e-9);
  // One SA thread did all of it before the last answer.
  EXPECT_GE(res.completion_s, static_cast<double>(n * (n - 1)) * get_s);
  EXPECT_GT(res.sa_busy_fraction, 0.0);
  EXPECT_LE(res.sa_busy_fraction, 1.0);
}

TEST(Boot, EachDaemonSubscribesAndChecksTheSmAtItsStart) {
  const std::uint32_t n = 30;
  const RunResult res = Simulator(boot(n)).run();
  EXPECT_GE(res.monitor_full_checks, n);
  EXPECT_GE(res.monitor_remote_mads, 4u * n);  // InformInfo x 2, MCMemberRecord, SMInfo
  Scenario running = boot(n);  // the same daemons already running: no start-up MADs
  running.workload = Workload::job_start;
  running.ranks = 1;
  EXPECT_EQ(Simulator(running).run().monitor_full_checks, 0u);
}

TEST(Boot, DaemonsStartWithinTheSpreadAndResolveFromTheirStart) {
  Scenario together = boot(30);
  together.start_spread_s = 0.0;
  Scenario spread = boot(30);
  spread.start_spread_s = 10.0;
  const RunResult at_once = Simulator(together).run();
  const RunResult later = Simulator(spread).run();
  EXPECT_LT(at_once.completion_s, 1.0);
  EXPECT_GT(later.completion_s, 5.0);  // the last of 30 daemons started after 5 s
  EXPECT_LT(later.completion_s, 11.0);
  EXPECT_EQ(later.paths_held, 30u * 29u);
  // A daemon polls its port only from its start: fewer local MADs than 30 daemons polling from 0.
  EXPECT_LT(later.monitor_local_mads, 30u * (static_cast<std::uint64_t>(later.completion_s) + 1));
}

TEST(Boot, NeedsDaemons) {
  Scenario s = boot(10);
  s.strategy = Strategy::per_process;
  EXPECT_THROW(Simulator{s}, std::invalid_argument);
}

}  // namespace
}  // namespace ibat::sim
