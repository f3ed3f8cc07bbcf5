// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The subnet prefetch (Policy::prefetch, the default) in the simulator: each daemon's GetTable,
// served by the SA model at one record per end port and answered with the paths a GET gives,
// fills its cache, so a boot costs N PathRecord GetTables (and, as ibatd sends them, N NodeRecord
// GetTables of the switches beside them, N SwitchInfoRecord ones that size the subnet before
// them and the table gates' probe GETs) instead of N(N-1) GETs, a job after the warm-up asks the SA
// nothing, and an SM restart with new LIDs is revalidated by GetTables; a GetTable slower than the
// MAD timer is resent like a GET; with prefetch off nothing of this happens.
#include <gtest/gtest.h>

#include "sim/simulator.h"

namespace ibat::sim {
namespace {

Scenario boot(std::uint32_t n) {
  Scenario s;
  s.workload = Workload::boot;
  s.nodes = n;
  return s;
}

TEST(Prefetch, IsTheDefault) { EXPECT_EQ(Scenario{}.policy.prefetch, core::Prefetch::subnet); }

TEST(Prefetch, BootSendsOneTablePerDaemonAndNoGet) {
  const std::uint64_t n = 30;
  const Scenario s = boot(n);
  const RunResult res = Simulator(s).run();
  EXPECT_EQ(res.sa_dropped, 0u);
  EXPECT_EQ(res.sa_tables, n);
  EXPECT_EQ(res.sa_switch_tables, 2 * n);  // the NodeRecord and the SwitchInfoRecord GetTable
  EXPECT_GE(res.table_probes, n);  // each table waited for a probe of the SA's queue
  EXPECT_EQ(res.sa_queries, res.monitor_remote_mads + res.table_probes);  // no other PathRecord GET
  EXPECT_EQ(res.resolver_sa_queries, 0u);
  EXPECT_EQ(res.tables_answered, n);
  EXPECT_EQ(res.tables_failed, 0u);
  // One record per end port, the requester's own included; the monitor's MADs and the probes are GETs.
  EXPECT_EQ(res.sa_records, n * n + res.monitor_remote_mads + res.table_probes);
  const double busy_ns = static_cast<double>(n) * static_cast<double>(s.sa.work_ns(n) + 2 * s.sa.query_ns) +
                         static_cast<double>(res.monitor_remote_mads + res.table_probes) * static_cast<double>(s.sa.work_ns(1));
  EXPECT_NEAR(res.sa_busy_s, busy_ns / 1e9, 1e-9);
}

TEST(Prefetch, AfterBootEveryDaemonResolvesEveryDestinationFromItsCache) {
  const std::uint64_t n = 30;
  const RunResult res = Simulator(boot(n)).run();
  EXPECT_EQ(res.requests, n * (n - 1));
  EXPECT_EQ(res.cache_hits, n * (n - 1));
  EXPECT_EQ(res.failures, 0u);
  EXPECT_EQ(res.paths_held, n * n);  // the table lists the path to the daemon's own port too
  EXPECT_EQ(res.resolve_max_ms, 0.0);
}

TEST(Prefetch, AJobAfterTheWarmUpAsksTheSaNothing) {
  const std::uint64_t n = 30, r = 4;
  Scenario s;
  s.workload = Workload::job_start;
  s.nodes = static_cast<std::uint32_t>(n);
  s.ranks = static_cast<std::uint32_t>(r);
  s.warm_s = 120;
  const RunResult res = Simulator(s).run();
  EXPECT_EQ(res.requests, n * r * (n - 1) * r);
  EXPECT_EQ(res.failures, 0u);
  EXPECT_EQ(res.sa_queries, 0u);
  EXPECT_EQ(res.sa_tables, 0u);
  EXPECT_EQ(res.cache_hits, n * (n - 1));
  EXPECT_LE(res.resolve_p99_ms, 1.0);
  ASSERT_TRUE(res.warmup);
  EXPECT_EQ(res.warmup->sa_tables, n);  // the daemons' start
}

Scenario restart_with_new_lids(std::uint32_t n) {
  Scenario s;
  s.workload = Workload::sm_restart;
  s.nodes = n;
  s.ranks = 4;
  s.working_set = 16;
  s.duration_s = 20.0;
  s.sm_restart_at_s = 8.0;
  s.sa_down_s = 2.0;
  s.lid_change = true;
  return s;
}

TEST(Prefetch, NewLidsAreRevalidatedByTablesWithoutFailuresOrOldDlids) {
  const std::uint64_t n = 40;
  const RunResult res = Simulator(restart_with_new_lids(static_cast<std::uint32_t>(n))).run();
  ASSERT_GT(res.requests, 0u);
  EXPECT_EQ(res.failures, 0u);
  EXPECT_EQ(res.stale_lid_served, 0u);
  EXPECT_EQ(res.sa_tables_dropped, 0u);
  // The running daemons had their tables before the run; at the SM change each asks one: its own
  // LID moved and the SM changed in the same poll, and the Resolver sends its table from tick().
  EXPECT_EQ(res.sa_tables, n);
  EXPECT_EQ(res.tables_answered, n);
  // Only the paths in use (each node's working set of 16) went by GET, ahead of the table.
  EXPECT_LE(res.resolver_sa_queries, n * 16);
  EXPECT_GT(res.resolver_sa_queries, 0u);
  ASSERT_TRUE(res.in_use_renewed_s);
  ASSERT_TRUE(res.all_renewed_s);
  EXPECT_LE(*res.in_use_renewed_s, *res.all_renewed_s);
  EXPECT_LT(*res.all_renewed_s, 1.0);
}

TEST(Prefetch, ATableSlowerThanTheMadTimerIsResentAndEachResendCostsTheSa) {
  const std::uint64_t n = 250;
  Scenario s = boot(static_cast<std::uint32_t>(n));
  s.sa.record_ns = 20'000'000;  // 5 s a table, alone in the SA's queue: past its first 3-5 s timer
                                // (a GET, 20 ms, still inside the table gate's 25 ms)
  const RunResult res = Simulator(s).run();
  EXPECT_GT(res.sa_tables, n);
  EXPECT_GE(res.sa_records, (res.sa_tables - res.sa_tables_dropped) * n);
}

// An SA that takes 4 s for the boot's 100 tables of 100 paths (400 us a path): arriving within the
// start's second they would queue past the tables' 3-5 s first MAD timer; the table gates send
// each only once a probe found the SA's queue short, so none is resent and the SA's queue stays
// inside the timer, whether the daemons learn the subnet's size first (a cold start: the switches'
// SwitchInfoRecords) or know it (expected_subnet_ports). An SA 4 x faster, or with 4 threads, is
// followed: the boot ends about 4 x sooner, with no setting changed.
TEST(Prefetch, DaemonsSendTheirTablesAsTheSasQueueAllowsAndNoneIsResent) {
  const std::uint32_t n = 100;
  Scenario s = boot(n);
  s.sa.record_ns = 400'000;
  for (const bool known : {false, true}) {
    SCOPED_TRACE(known ? "known" : "cold");
    s.known_subnet = known;
    const RunResult res = Simulator(s).run();
    EXPECT_EQ(res.sa_tables, n);
    EXPECT_EQ(res.sa_switch_tables, known ? n : 2 * n);
    EXPECT_EQ(res.tables_answered, n);
    EXPECT_LT(res.sa_max_wait_ms, 2500.0);
    EXPECT_EQ(res.failures, 0u);
    EXPECT_EQ(res.paths_held, std::uint64_t{n} * n);
    EXPECT_LE(res.completion_s, 1.0 + 4.0 * 1.3);  // start spread + the SA's work, 30 % over
  }
  for (const bool threads : {false, true}) {
    SCOPED_TRACE(threads ? "4 threads" : "4 x faster");
    Scenario fast = boot(n);
    fast.sa.record_ns = 400'000;
    if (threads) fast.sa.threads = 4;
    else fast.sa.record_ns /= 4;
    const RunResult res = Simulator(fast).run();
    EXPECT_EQ(res.sa_tables, n);
    EXPECT_EQ(res.failures, 0u);
    EXPECT_LE(res.completion_s, 1.0 + 1.0 * 1.3);
  }
}

TEST(Prefetch, OffSendsNoTableAndGivesTheGetFigures) {
  const std::uint64_t n = 30;
  Scenario s = boot(static_cast<std::uint32_t>(n));
  s.policy.prefetch = core::Prefetch::off;
  const RunResult res = Simulator(s).run();
  EXPECT_EQ(res.sa_tables, 0u);
  EXPECT_EQ(res.sa_switch_tables, 0u);
  EXPECT_EQ(res.tables_answered, 0u);
  EXPECT_EQ(res.sa_queries - res.monitor_remote_mads, n * (n - 1));
  EXPECT_EQ(res.monitor_remote_mads, 5 * n);
  EXPECT_EQ(res.paths_held, n * (n - 1));
  EXPECT_EQ(res.cache_hits, 0u);
}

TEST(Prefetch, OffKeepsTheLidChangeFiguresOfGets) {
  Scenario s = restart_with_new_lids(40);
  s.policy.prefetch = core::Prefetch::off;
  const RunResult res = Simulator(s).run();
  EXPECT_EQ(res.sa_tables, 0u);
  EXPECT_EQ(res.paths_held, 40u * 16u);
  ASSERT_TRUE(res.in_use_renewed_s);
  EXPECT_EQ(res.in_use_renewed_s, res.all_renewed_s);  // the working set is all it holds
}

}  // namespace
}  // namespace ibat::sim
