// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// job-start --warm-s: the daemons start warm_s before the job. The top-level figures count from
// the job's start, the warm-up's own (the daemons' start-up and upkeep; with prefetch off no path
// yet, as no daemon asks for one nobody asked for) are in RunResult::warmup and the JSON's `warmup`.
#include <gtest/gtest.h>

#include <stdexcept>

#include "sim/report.h"
#include "sim/simulator.h"

namespace ibat::sim {
namespace {

Scenario warm_job(double warm_s) {
  Scenario s;
  s.policy.prefetch = core::Prefetch::off;  // GETs only (prefetch_test.cpp has the GetTables)
  s.workload = Workload::job_start;
  s.strategy = Strategy::ibat;
  s.nodes = 30;
  s.ranks = 4;
  s.warm_s = warm_s;
  return s;
}

TEST(WarmStart, TopLevelFiguresCountFromTheJobsStart) {
  const std::uint64_t n = 30, r = 4;
  const RunResult res = Simulator(warm_job(120)).run();
  EXPECT_EQ(res.requests, n * r * (n - 1) * r);
  EXPECT_EQ(res.failures, 0u);
  EXPECT_EQ(res.resolver_sa_queries, n * (n - 1));
  EXPECT_EQ(res.sa_queries - res.monitor_remote_mads, n * (n - 1));
  EXPECT_EQ(res.monitor_full_checks, 0u);  // the start-up checks were in the warm-up
  EXPECT_LT(res.monitor_local_mads, n * 10);  // a poll a second during the job's few seconds
  EXPECT_GT(res.completion_s, 0.0);
  EXPECT_LT(res.completion_s, 10.0);  // from the job's start, not from the daemons'
  EXPECT_GT(res.resolve_p99_ms, 0.0);
}

TEST(WarmStart, TheWarmUpHasTheDaemonsStartAndUpkeepOnly) {
  const std::uint32_t n = 30;
  const RunResult res = Simulator(warm_job(120)).run();
  ASSERT_NE(res.warmup, nullptr);
  const RunResult& w = *res.warmup;
  EXPECT_EQ(w.requests, 0u);
  EXPECT_EQ(w.resolver_sa_queries, 0u);
  EXPECT_EQ(w.sa_queries, w.monitor_remote_mads);
  EXPECT_GE(w.monitor_full_checks, n);         // every daemon's start
  EXPECT_GE(w.monitor_remote_mads, 4u * n);    // + subscriptions and the broadcast group
  EXPECT_GE(w.monitor_local_mads, n * 119u);   // a poll a second for 119-120 s
  EXPECT_LE(w.monitor_local_mads, n * 121u);
  EXPECT_DOUBLE_EQ(w.sa_busy_fraction, w.sa_busy_s / 120.0);
  EXPECT_EQ(w.completion_s, 0.0);
  EXPECT_EQ(w.resolve_p99_ms, 0.0);
}

TEST(WarmStart, ZeroWarmUpStartsTheDaemonsWithTheJob) {
  const std::uint32_t n = 30;
  const RunResult res = Simulator(warm_job(0)).run();
  ASSERT_NE(res.warmup, nullptr);
  EXPECT_EQ(res.warmup->sa_queries, 0u);
  EXPECT_GE(res.monitor_full_checks, n);  // the start-up checks are the job's
  EXPECT_EQ(res.failures, 0u);
}

TEST(WarmStart, JsonCarriesTheWarmUpAndTheSaWork) {
  const Scenario s = warm_job(60);
  const RunResult res = Simulator(s).run();
  const nlohmann::json j = to_json(s, res);
  EXPECT_EQ(j.at("warm_s").get<double>(), 60.0);
  EXPECT_EQ(j.at("sa_queries").get<std::uint64_t>(), res.sa_queries);
  EXPECT_EQ(j.at("sa_records").get<std::uint64_t>(), res.sa_records);
  EXPECT_DOUBLE_EQ(j.at("sa_busy_s").get<double>(), res.sa_busy_s);
  EXPECT_EQ(j.at("warmup").at("sa_queries").get<std::uint64_t>(), res.warmup->sa_queries);
  EXPECT_DOUBLE_EQ(j.at("warmup").at("sa_busy_s").get<double>(), res.warmup->sa_busy_s);
  Scenario running = s;  // daemons already running: no warm-up, no `warmup`
  running.warm_s.reset();
  const RunResult plain = Simulator(running).run();
  EXPECT_EQ(plain.warmup, nullptr);
  EXPECT_FALSE(to_json(running, plain).contains("warmup"));
}

TEST(WarmStart, OnlyForAJobWithDaemons) {
  Scenario per_process = warm_job(10);
  per_process.strategy = Strategy::per_process;
  EXPECT_THROW(Simulator{per_process}, std::invalid_argument);
  Scenario churn = warm_job(10);
  churn.workload = Workload::churn;
  EXPECT_THROW(Simulator{churn}, std::invalid_argument);
}

}  // namespace
}  // namespace ibat::sim
