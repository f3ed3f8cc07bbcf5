// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// sm-restart with and without new LIDs, default policy, at a size the test suite can afford:
// after an SM restart that moved the LIDs almost no connect gets an old DLID (docs/scale.md),
// nothing fails, and a restart that kept the LIDs still serves stale paths at once.
#include <gtest/gtest.h>

#include "sim/simulator.h"

namespace ibat::sim {
namespace {

Scenario restart(bool lid_change) {
  Scenario s;
  s.policy.prefetch = core::Prefetch::off;  // GETs only (prefetch_test.cpp has the GetTables)
  s.workload = Workload::sm_restart;
  s.strategy = Strategy::ibat;
  s.nodes = 100;
  s.ranks = 16;
  s.working_set = 64;
  s.duration_s = 20.0;
  s.sm_restart_at_s = 8.0;
  s.sa_down_s = 2.0;
  s.lid_change = lid_change;
  return s;
}

TEST(NewLids, AlmostNoConnectGetsAnOldDlidAndNoneFails) {
  const RunResult res = Simulator(restart(true)).run();
  ASSERT_GT(res.requests, 0u);
  EXPECT_EQ(res.failures, 0u);
  EXPECT_LE(res.stale_lid_served * 1000, res.requests);  // <= 0.1 %
  EXPECT_GT(res.stale_holds, 0u);  // connects after the restart did wait for fresh paths
}

TEST(NewLids, SameLidRestartServesStaleAtOnce) {
  const RunResult res = Simulator(restart(false)).run();
  EXPECT_EQ(res.failures, 0u);
  EXPECT_EQ(res.stale_lid_served, 0u);
  EXPECT_GT(res.stale_hits, 0u);
  EXPECT_EQ(res.stale_holds, 0u);
}

}  // namespace
}  // namespace ibat::sim
