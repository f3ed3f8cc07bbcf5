// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SaModel: FIFO service at the configured rate, OpenSM's overload drops, queue-limit drops,
// outages, fabric latency; the cost model (per-query overhead + per-record work, worker threads).
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/sa_model.h"

namespace ibat::sim {
namespace {

SaOptions options(double rate, std::uint32_t queue, std::int64_t latency_ns) {
  SaOptions o;
  o.set_get_rate(rate);
  o.queue_limit = queue;
  o.latency_ns = latency_ns;
  return o;
}

TEST(SaModel, ServesInFifoOrderAtItsRatePlusRoundTrip) {
  TimeSeries series(1'000'000'000);
  SaModel sa(options(1000.0, 10, 5'000), series);  // 1 ms per PathRecord
  EXPECT_EQ(sa.submit(0), 5'000 + 1'000'000 + 5'000);
  EXPECT_EQ(sa.submit(0), 5'000 + 2'000'000 + 5'000);
  EXPECT_EQ(sa.submit(10'000'000), 10'000'000 + 5'000 + 1'000'000 + 5'000);  // idle again
  EXPECT_EQ(sa.totals().served, 3u);
  EXPECT_EQ(sa.totals().dropped, 0u);
}

TEST(SaModel, DropsArrivalsBeyondTheQueueLimit) {
  TimeSeries series(1'000'000'000);
  SaModel sa(options(1000.0, 3, 0), series);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(sa.submit(0).has_value());
  EXPECT_FALSE(sa.submit(0).has_value());
  EXPECT_TRUE(sa.submit(1'000'000).has_value());  // the first one finished: room for one more
  EXPECT_EQ(sa.totals().arrived, 5u);
  EXPECT_EQ(sa.totals().dropped, 1u);
}

TEST(SaModel, QueuesWithoutLimitUntilTheHeadOfLineWaitPassesTheFifoTimeout) {
  TimeSeries series(1'000'000'000);
  SaOptions o = options(1000.0, 0, 0);  // OpenSM: unbounded queue, 10 s max_msg_fifo_timeout
  SaModel sa(o, series);
  for (int i = 0; i < 12'000; ++i) ASSERT_TRUE(sa.submit(0).has_value()) << i;  // 12 s of work
  EXPECT_EQ(sa.totals().dropped, 0u);
  // At 10.5 s the request taken off last had waited 10.5 s (> 10 s) and many still wait: dropped.
  EXPECT_FALSE(sa.submit(10'500'000'000).has_value());
  EXPECT_EQ(sa.totals().overload_dropped, 1u);
  EXPECT_EQ(series.max_sa_wait_ns(), 11'999'000'000);  // the last of the 12,000 accepted
  // Once the queue holds at most one request, arrivals are accepted again.
  EXPECT_TRUE(sa.submit(11'999'500'000).has_value());
  EXPECT_EQ(sa.totals().dropped, 1u);
}

TEST(SaModel, LosesEverythingDuringAnOutageIncludingQueuedWork) {
  TimeSeries series(1'000'000'000);
  SaModel sa(options(1000.0, 100, 0), series);
  sa.add_outage(2'500'000, 5'000'000);
  EXPECT_TRUE(sa.submit(0).has_value());   // finishes at 1 ms
  EXPECT_TRUE(sa.submit(0).has_value());   // finishes at 2 ms
  EXPECT_FALSE(sa.submit(0).has_value());  // would finish at 3 ms, after the SM went away
  EXPECT_FALSE(sa.submit(3'000'000).has_value());
  EXPECT_EQ(sa.submit(5'000'000), 6'000'000);
  EXPECT_EQ(sa.totals().dropped, 2u);
}

TEST(SaModel, TimeSeriesCountsArrivalsPerBucket) {
  TimeSeries series(1'000'000'000);
  SaModel sa(options(50'000.0, 1'000'000, 0), series);
  for (int i = 0; i < 500; ++i) sa.submit(0);
  for (int i = 0; i < 200; ++i) sa.submit(1'500'000'000);
  EXPECT_DOUBLE_EQ(series.peak_sa_qps(), 500.0);
}

// The defaults: 17 us per query, 3.33 us per record, one thread.
SaOptions costs(std::uint32_t threads) {
  SaOptions o;
  o.threads = threads;
  o.latency_ns = 0;
  return o;
}

TEST(SaCost, DefaultsAreTheOpenSmAndIbssaFigures) {
  const SaOptions o;
  EXPECT_EQ(o.query_ns, 17'000);
  EXPECT_EQ(o.record_ns, 3'330);
  EXPECT_EQ(o.threads, 1u);
  EXPECT_EQ(o.work_ns(1), 20'330);
  EXPECT_NEAR(o.get_rate_per_s(), 49'188.0, 1.0);
}

TEST(SaCost, BusyTimeIsQueriesTimesOverheadPlusRecordsTimesPerRecord) {
  TimeSeries series(1'000'000'000);
  SaModel sa(costs(1), series);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(sa.submit(0, SaQuery::get()).has_value());
  for (const std::uint32_t n : {100u, 0u, 500u}) ASSERT_TRUE(sa.submit(0, SaQuery::get_table(n)).has_value());
  EXPECT_EQ(sa.totals().served, 13u);
  EXPECT_EQ(sa.totals().records, 610u);
  EXPECT_EQ(sa.totals().busy_ns, 13 * 17'000 + 610 * 3'330);
}

TEST(SaCost, AGetTableSavesThePerQueryOverheadOfItsGets) {
  TimeSeries s1(1'000'000'000), s2(1'000'000'000);
  SaModel gets(costs(1), s1), table(costs(1), s2);
  std::optional<std::int64_t> last_get;
  for (int i = 0; i < 1000; ++i) last_get = gets.submit(0);
  const auto whole = table.submit(0, SaQuery::get_table(1000));
  EXPECT_EQ(*last_get, 1000 * 20'330);
  EXPECT_EQ(*whole, 17'000 + 1000 * 3'330);
  EXPECT_EQ(gets.totals().records, table.totals().records);
  EXPECT_EQ(gets.totals().busy_ns - table.totals().busy_ns, 999 * 17'000);
}

TEST(SaCost, ThreadsDivideTheTimeNotTheWork) {
  TimeSeries s1(1'000'000'000), s4(1'000'000'000);
  SaModel one(costs(1), s1), four(costs(4), s4);
  std::int64_t last_one = 0, last_four = 0;
  for (int i = 0; i < 1000; ++i) {
    last_one = std::max(last_one, *one.submit(0));
    last_four = std::max(last_four, *four.submit(0));
  }
  EXPECT_EQ(last_one, 1000 * 20'330);
  EXPECT_EQ(last_four, 250 * 20'330);
  EXPECT_EQ(one.totals().busy_ns, four.totals().busy_ns);
}

TEST(SaCost, ThreadsServeOneFifoWithoutOvertaking) {
  TimeSeries series(1'000'000'000);
  SaModel sa(costs(2), series);
  const std::int64_t table_ns = 17'000 + 1000 * 3'330;
  EXPECT_EQ(sa.submit(0, SaQuery::get_table(1000)), table_ns);  // worker 1
  EXPECT_EQ(sa.submit(0), 20'330);                               // worker 2, beside it
  EXPECT_EQ(sa.submit(0), 2 * 20'330);                           // worker 2 again
  EXPECT_EQ(sa.submit(0, SaQuery::get_table(1000)), 2 * 20'330 + table_ns);  // worker 2
  // Both workers busy with long tables: a GET waits for the first to free up, however short it is.
  EXPECT_EQ(sa.submit(0), table_ns + 20'330);
  EXPECT_EQ(series.max_sa_wait_ns(), table_ns);
}

TEST(SaCost, TheQueueLimitCountsEveryWorkersQuery) {
  TimeSeries series(1'000'000'000);
  SaOptions o = costs(2);
  o.queue_limit = 3;
  SaModel sa(o, series);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(sa.submit(0).has_value());  // two in service, one waiting
  EXPECT_FALSE(sa.submit(0).has_value());
  EXPECT_TRUE(sa.submit(20'330).has_value());  // both first ones done, the third in service
  EXPECT_EQ(sa.totals().dropped, 1u);
}

TEST(SaCost, DroppedQueriesCostNothing) {
  TimeSeries series(1'000'000'000);
  SaModel sa(costs(1), series);
  sa.add_outage(30'000, 1'000'000);
  EXPECT_TRUE(sa.submit(0).has_value());                            // done at 20.33 us
  EXPECT_FALSE(sa.submit(0, SaQuery::get_table(10)).has_value());   // would end inside the outage
  EXPECT_FALSE(sa.submit(500'000).has_value());                     // during it
  EXPECT_EQ(sa.totals().busy_ns, 20'330);
  EXPECT_EQ(sa.totals().records, 1u);
}

TEST(SaCost, SaRateScalesBothCostsKeepingTheirRatio) {
  SaOptions o;
  o.set_get_rate(50'000.0);
  EXPECT_EQ(o.work_ns(1), 20'000);
  EXPECT_EQ(o.record_ns, 3'276);  // 20,000 x 3.33 / 20.33
  EXPECT_EQ(o.query_ns, 16'724);
  o.threads = 3;
  EXPECT_DOUBLE_EQ(o.get_rate_per_s(), 150'000.0);
}

}  // namespace
}  // namespace ibat::sim
