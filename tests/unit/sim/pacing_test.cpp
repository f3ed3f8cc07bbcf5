// The default Policy's SaPacer against the OpenSM-like SA model, at a size that runs fast:
// job-start costs at most 5 % resends, fails nothing and keeps the SA busy; the fixed token
// bucket alone does not; churn and an SM restart fail nothing and keep the SA's queue short.
#include <gtest/gtest.h>

#include "sim/simulator.h"

namespace ibat::sim {
namespace {

Scenario job_start(std::uint32_t n, Pace pace) {
  Scenario s;
  s.workload = Workload::job_start;
  s.nodes = n;
  s.ranks = 16;
  s.pace = pace;
  return s;
}

TEST(Pacing, JobStartWithTheDefaultPolicyMeetsTheGoals) {
  // PathRecords only: at this size one extra SA arrival (a monitor MAD) moves the completion time
  // as much as another seed does (0.95-1.10 s over seeds 1-8, with or without the monitor).
  Scenario s = job_start(200, Pace::policy);
  s.monitor.enabled = false;
  const RunResult res = Simulator(s).run();
  const double pairs = 200.0 * 199.0;
  EXPECT_EQ(res.failures, 0u);
  EXPECT_LE(static_cast<double>(res.sa_queries), 1.05 * pairs);
  EXPECT_LE(res.completion_s, 1.3 * pairs / s.sa.rate_per_s);  // virtual time: the SA kept busy
  EXPECT_EQ(res.sa_late_buckets, 0u);
}

TEST(Pacing, TheFixedBucketAloneSwampsTheSa) {
  const RunResult res = Simulator(job_start(200, Pace::fixed)).run();
  EXPECT_GT(static_cast<double>(res.sa_queries), 1.05 * 200.0 * 199.0);  // resends
}

TEST(Pacing, ChurnAndSmRestartFailNothingAndKeepTheQueueShort) {
  for (const Workload w : {Workload::churn, Workload::sm_restart}) {
    Scenario s;
    s.workload = w;
    s.nodes = 200;
    s.ranks = 16;
    s.duration_s = 30.0;
    const RunResult res = Simulator(s).run();
    EXPECT_EQ(res.failures, 0u) << to_string(w);
    EXPECT_LE(res.sa_late_buckets, 1u) << to_string(w);
  }
}

}  // namespace
}  // namespace ibat::sim
