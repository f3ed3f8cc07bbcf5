// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// FabricStats: a host's figures over its ports: counters add up, the SA's measured round trip,
// time per record and timer floors are the largest port's, HCA events hold only when every port has them.
#include <gtest/gtest.h>

#include "fabric/fabric_options.h"

namespace ibat::fabric {
namespace {

TEST(FabricStats, AHostsCountersAreItsPortsSumAndItsGaugesTheLargestPorts) {
  FabricStats host;
  host.port_events = true;
  const FabricStats a{
      .mads_sent = 10, .sa_table_records = 500, .sa_srtt_us = 300, .sa_table_ns_per_record = 2000,
      .sa_mad_timer_floor_us = 600, .sa_table_timer_floor_us = 4000, .port_events = true};
  const FabricStats b{
      .mads_sent = 5, .sa_table_records = 500, .sa_srtt_us = 100, .sa_table_ns_per_record = 4000,
      .sa_mad_timer_floor_us = 10000, .sa_table_timer_floor_us = 2000, .port_events = false};
  host += a;
  host += b;
  EXPECT_EQ(host.mads_sent, 15U);
  EXPECT_EQ(host.sa_table_records, 1000U);
  EXPECT_EQ(host.sa_srtt_us, 300U);
  EXPECT_EQ(host.sa_table_ns_per_record, 4000U);
  EXPECT_EQ(host.sa_mad_timer_floor_us, 10000U) << "a port whose timer backed off shows";
  EXPECT_EQ(host.sa_table_timer_floor_us, 4000U);
  EXPECT_FALSE(host.port_events);
}

}  // namespace
}  // namespace ibat::fabric
