// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// job-start --service-ids: connects that carry rdma_cm's per-process ServiceIDs cost the SA what
// the same job without ServiceIDs costs (the tables and nothing else); connects that all carry
// iSER's ServiceID, which the default Policy keeps apart, cost one GET per (host, destination).
#include <gtest/gtest.h>

#include "sim/simulator.h"

namespace ibat::sim {
namespace {

RunResult cold_job(Scenario::ServiceIds ids) {
  Scenario s;
  s.workload = Workload::job_start;
  s.strategy = Strategy::ibat;
  s.nodes = 40;
  s.ranks = 4;
  s.warm_s = 0;
  s.service_ids = ids;
  return Simulator(s).run();
}

TEST(ServiceIds, PerProcessServiceIdsCostTheSaWhatNoServiceIdsCost) {
  const RunResult none = cold_job(Scenario::ServiceIds::none);
  const RunResult per_process = cold_job(Scenario::ServiceIds::per_process);
  EXPECT_EQ(per_process.failures, 0u);
  EXPECT_EQ(per_process.sa_records, none.sa_records);
  EXPECT_EQ(per_process.sa_queries, none.sa_queries);
  EXPECT_EQ(per_process.resolver_sa_queries, none.resolver_sa_queries);
}

TEST(ServiceIds, AStorageServiceIdCostsOneGetPerHostAndDestination) {
  const std::uint64_t n = 40;
  const RunResult none = cold_job(Scenario::ServiceIds::none);
  const RunResult storage = cold_job(Scenario::ServiceIds::storage);
  EXPECT_EQ(storage.failures, 0u);
  EXPECT_EQ(storage.resolver_sa_queries, none.resolver_sa_queries + n * (n - 1));
  // Beside those GETs the SA computed the monitors' MADs, the table gates' probes (GETs too, as many
  // as the SA's queue asks for) and n records a table; the tables go as the SA's queue allows, so
  // a job that ends sooner may end before the last of them.
  auto other_records = [n](const RunResult& r) { return r.sa_records - r.table_probes - r.sa_tables * n; };
  EXPECT_EQ(other_records(storage), other_records(none) + n * (n - 1));
}

}  // namespace
}  // namespace ibat::sim
