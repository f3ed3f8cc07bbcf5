// SaModel: FIFO service at the configured rate, OpenSM's overload drops, queue-limit drops,
// outages, fabric latency.
#include <gtest/gtest.h>

#include "sim/sa_model.h"

namespace ibat::sim {
namespace {

SaOptions options(double rate, std::uint32_t queue, std::int64_t latency_ns) {
  SaOptions o;
  o.rate_per_s = rate;
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
  EXPECT_EQ(sa.totals().max_wait_ns, 11'999'000'000);  // the last of the 12,000 accepted
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

}  // namespace
}  // namespace ibat::sim
