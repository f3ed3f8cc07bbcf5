// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The idle workload: daemons already running and nothing asked of them for --duration-s: only
// their port monitors reach the SA, and its busy fraction is their MADs' work over the duration.
#include <gtest/gtest.h>

#include <stdexcept>

#include "sim/simulator.h"

namespace ibat::sim {
namespace {

Scenario idle(std::uint32_t n, double seconds) {
  Scenario s;
  s.workload = Workload::idle;
  s.strategy = Strategy::ibat;
  s.nodes = n;
  s.duration_s = seconds;
  return s;
}

TEST(Idle, OnlyTheMonitorsReachTheSa) {
  const std::uint32_t n = 40;
  const Scenario s = idle(n, 600);
  const RunResult res = Simulator(s).run();
  EXPECT_EQ(res.requests, 0u);
  EXPECT_EQ(res.resolver_sa_queries, 0u);
  EXPECT_GT(res.monitor_routine_checks, 0u);
  EXPECT_EQ(res.sa_queries, res.monitor_remote_mads);
  EXPECT_EQ(res.sa_dropped, 0u);
  // The run is the duration, no more: one local PortInfo per second per daemon.
  EXPECT_GE(res.monitor_local_mads, n * 599u);
  EXPECT_LE(res.monitor_local_mads, n * 601u);
}

TEST(Idle, BusyFractionIsTheMonitorsWorkOverTheDuration) {
  const Scenario s = idle(40, 600);
  const RunResult res = Simulator(s).run();
  const double get_s = static_cast<double>(s.sa.work_ns(1)) / 1e9;
  EXPECT_NEAR(res.sa_busy_s, static_cast<double>(res.sa_served) * get_s, 1e-9);
  EXPECT_DOUBLE_EQ(res.sa_busy_fraction, res.sa_busy_s / 600.0);
  EXPECT_GT(res.sa_busy_fraction, 0.0);
  EXPECT_LT(res.sa_busy_fraction, 1e-4);  // 40 daemons: a routine check each every 60-90 s
}

TEST(Idle, BusyFractionGrowsWithTheDaemonsAndShrinksWithThreads) {
  const RunResult few = Simulator(idle(40, 600)).run();
  const RunResult many = Simulator(idle(400, 600)).run();
  EXPECT_GT(many.sa_busy_fraction, 7.0 * few.sa_busy_fraction);
  EXPECT_LT(many.sa_busy_fraction, 13.0 * few.sa_busy_fraction);
  Scenario threads = idle(400, 600);
  threads.sa.threads = 4;
  EXPECT_NEAR(Simulator(threads).run().sa_busy_fraction, many.sa_busy_fraction / 4, many.sa_busy_fraction / 40);
}

TEST(Idle, NeedsDaemons) {
  Scenario s = idle(10, 60);
  s.strategy = Strategy::per_process;
  EXPECT_THROW(Simulator{s}, std::invalid_argument);
}

}  // namespace
}  // namespace ibat::sim
