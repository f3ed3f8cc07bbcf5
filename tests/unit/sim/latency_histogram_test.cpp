// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// LatencyHistogram: weighted quantiles within the bucket precision, exact maximum.
#include <gtest/gtest.h>

#include "sim/latency_histogram.h"

namespace ibat::sim {
namespace {

TEST(LatencyHistogram, QuantilesAreWithinThreePercent) {
  LatencyHistogram h;
  for (std::int64_t v = 1; v <= 100'000; ++v) h.add(v * 1'000);
  EXPECT_EQ(h.count(), 100'000u);
  EXPECT_NEAR(static_cast<double>(h.quantile(0.5)), 50e6, 50e6 * 0.03);
  EXPECT_NEAR(static_cast<double>(h.quantile(0.99)), 99e6, 99e6 * 0.03);
  EXPECT_EQ(h.max(), 100'000'000);
  EXPECT_EQ(h.quantile(1.0), 100'000'000);
}

TEST(LatencyHistogram, WeightsCountAsRepeatedSamples) {
  LatencyHistogram h;
  h.add(0, 240);      // cache hits
  h.add(2'000'000, 16);
  EXPECT_EQ(h.count(), 256u);
  EXPECT_EQ(h.quantile(0.5), 0);
  EXPECT_NEAR(static_cast<double>(h.quantile(0.99)), 2e6, 2e6 * 0.03);
}

}  // namespace
}  // namespace ibat::sim
