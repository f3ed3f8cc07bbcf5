// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Small runs of the simulator with the real Resolver whose totals equal closed forms exactly.
#include <gtest/gtest.h>

#include "sim/analytic.h"
#include "sim/simulator.h"

namespace ibat::sim {
namespace {

Scenario job_start(Strategy strategy, std::uint32_t n, std::uint32_t r) {
  Scenario s;
  s.policy.prefetch = core::Prefetch::off;  // GETs only (prefetch_test.cpp has the GetTables)
  s.workload = Workload::job_start;
  s.strategy = strategy;
  s.nodes = n;
  s.ranks = r;
  return s;
}

Scenario sm_restart(Strategy strategy, bool lid_change) {
  Scenario s;
  s.policy.prefetch = core::Prefetch::off;  // GETs only (prefetch_test.cpp has the GetTables)
  s.workload = Workload::sm_restart;
  s.strategy = strategy;
  s.nodes = 24;
  s.ranks = 4;
  s.working_set = 6;
  s.duration_s = 30.0;
  s.sm_restart_at_s = 10.0;
  s.sa_down_s = 2.0;
  s.lid_change = lid_change;
  return s;
}

TEST(JobStart, IbatCostsOneQueryPerNodePairAndFailsNothing) {
  const std::uint64_t n = 30, r = 4;
  const RunResult res = Simulator(job_start(Strategy::ibat, n, r)).run();
  EXPECT_FALSE(res.analytic);
  EXPECT_EQ(res.sa_queries - res.monitor_remote_mads, n * (n - 1));  // monitors: monitor_test.cpp
  EXPECT_EQ(res.resolver_sa_queries, n * (n - 1));
  EXPECT_EQ(res.sa_dropped, 0u);
  EXPECT_EQ(res.failures, 0u);
  EXPECT_EQ(res.requests, n * r * (n - 1) * r);
  EXPECT_GT(res.completion_s, 0.0);
}

TEST(JobStart, PerProcessQueriesTheSaForEveryConnect) {
  const std::uint64_t n = 12, r = 3;
  const RunResult res = Simulator(job_start(Strategy::per_process, n, r)).run();
  EXPECT_FALSE(res.analytic);
  EXPECT_EQ(res.sa_queries, n * r * (n - 1) * r);
  EXPECT_EQ(res.failures, 0u);
}

TEST(JobStart, PerProcessClosedFormCountsTheSameQueriesAndIsLabelled) {
  Scenario s = job_start(Strategy::per_process, 12, 3);
  s.force_analytic = true;
  ASSERT_TRUE(needs_closed_form(s));
  const RunResult closed = per_process_job_start(s);
  EXPECT_TRUE(closed.analytic);
  EXPECT_EQ(closed.sa_queries, Simulator(job_start(Strategy::per_process, 12, 3)).run().sa_queries);
}

TEST(JobStart, SaturatedSaDropsAndTheFabricRetries) {
  Scenario s = job_start(Strategy::per_process, 12, 3);
  s.sa.queue_limit = 8;
  const RunResult res = Simulator(s).run();
  EXPECT_GT(res.sa_dropped, 0u);
  EXPECT_EQ(res.sa_queries, res.sa_served + res.sa_dropped);
  EXPECT_GT(res.sa_queries, 12u * 3 * 11 * 3);  // resent MADs reach the SA again
}

TEST(SmRestart, FlushOnSmChangeRequeriesEveryEntryInUse) {
  const Scenario s = sm_restart(Strategy::flush_on_sm_change, false);
  const RunResult res = Simulator(s).run();
  const std::uint64_t entries_in_use = std::uint64_t{s.nodes} * s.working_set;
  // Filled once, flushed, filled again; the rest are the port monitors' MADs.
  EXPECT_EQ(res.sa_queries - res.monitor_remote_mads, 2 * entries_in_use);
  EXPECT_EQ(res.failures, 0u);
}

TEST(SmRestart, IbatFailsNothing) {
  const RunResult res = Simulator(sm_restart(Strategy::ibat, false)).run();
  EXPECT_EQ(res.failures, 0u);
  EXPECT_GT(res.stale_hits, 0u);
}

TEST(SmRestart, IbatFailsNothingWhenLidsChange) {
  const RunResult res = Simulator(sm_restart(Strategy::ibat, true)).run();
  EXPECT_EQ(res.failures, 0u);
  EXPECT_GT(res.revalidations, 0u);
}

TEST(SmRestart, PerProcessFailsWhileTheSaIsDown) {
  // 2 s outage > 4 MAD attempts x 200 ms: connects issued during the outage time out.
  const RunResult res = Simulator(sm_restart(Strategy::per_process, false)).run();
  EXPECT_GT(res.failures, 0u);
  EXPECT_GT(res.sa_dropped, 0u);
}

Scenario churn(Strategy strategy) {
  Scenario s;
  s.policy.prefetch = core::Prefetch::off;  // GETs only (prefetch_test.cpp has the GetTables)
  s.workload = Workload::churn;
  s.strategy = strategy;
  s.nodes = 16;
  s.ranks = 4;
  s.duration_s = 20.0;
  s.connects_per_rank_s = 2.0;
  return s;
}

TEST(Churn, PerProcessQueriesOncePerConnect) {
  const RunResult res = Simulator(churn(Strategy::per_process)).run();
  EXPECT_GT(res.requests, 0u);
  EXPECT_EQ(res.sa_queries, res.requests);
  EXPECT_EQ(res.failures, 0u);
}

TEST(Churn, IbatQueriesEachNodeDestinationPairAtMostOnce) {
  const Scenario s = churn(Strategy::ibat);
  const RunResult res = Simulator(s).run();
  EXPECT_GT(res.requests, std::uint64_t{s.nodes} * (s.nodes - 1));  // destinations repeat
  const std::uint64_t path_queries = res.sa_queries - res.monitor_remote_mads;
  EXPECT_LE(path_queries, std::uint64_t{s.nodes} * (s.nodes - 1));
  EXPECT_EQ(path_queries + res.cache_hits + res.coalesced, res.requests);
  EXPECT_EQ(res.failures, 0u);
}

}  // namespace
}  // namespace ibat::sim
