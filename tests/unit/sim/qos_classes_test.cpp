// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// job-start --qos-classes: connects that carry QoS classes cost, with the default Policy ("auto":
// every class but 0 kept apart), at most one more GetTable per host and class, and no failure;
// with qos_classes = [] they cost exactly what the same job without classes costs.
#include <gtest/gtest.h>

#include "sim/simulator.h"

namespace ibat::sim {
namespace {

constexpr std::uint64_t kNodes = 40;

RunResult job(std::uint16_t classes, double warm_s, bool classes_off = false) {
  Scenario s;
  s.workload = Workload::job_start;
  s.strategy = Strategy::ibat;
  s.nodes = kNodes;
  s.ranks = 4;
  s.warm_s = warm_s;
  s.qos_classes = classes;
  if (classes_off) s.policy.qos_classes.clear();
  return Simulator(s).run();
}

TEST(QosClasses, EachClassCostsAtMostOneTablePerHostAndNoFailure) {
  for (double warm_s : {0.0, 600.0}) {
    const RunResult none = job(0, warm_s);
    for (const std::uint16_t classes : {std::uint16_t{1}, std::uint16_t{3}}) {
      const RunResult with = job(classes, warm_s);
      EXPECT_EQ(with.failures, 0u) << classes << " classes, warm " << warm_s;
      EXPECT_GT(with.sa_tables, none.sa_tables) << classes << " classes, warm " << warm_s;
      EXPECT_LE(with.sa_tables, none.sa_tables + classes * kNodes) << classes << " classes, warm " << warm_s;
    }
  }
  // Warm: the daemons had their default table; each asks one per class, at the class's first resolve.
  EXPECT_EQ(job(3, 600.0).sa_tables, 3 * kNodes);
}

TEST(QosClasses, WithClassesOffTheyCostWhatNoClassCosts) {
  const RunResult none = job(0, 0.0);
  const RunResult off = job(3, 0.0, true);
  EXPECT_EQ(off.failures, 0u);
  EXPECT_EQ(off.sa_tables, none.sa_tables);
  EXPECT_EQ(off.sa_records, none.sa_records);
  EXPECT_EQ(off.sa_queries, none.sa_queries);
}

}  // namespace
}  // namespace ibat::sim
