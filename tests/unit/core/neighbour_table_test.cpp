// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// NeighbourTable: IP -> hardware address -> GID, source LID, GID change detection.
#include <gtest/gtest.h>

#include "core/neighbour_table.h"

namespace ibat::core {
namespace {

TEST(NeighbourTable, TracksIpToGidAndReportsGidChange) {
  NeighbourTable table;
  IpAddr ip = *IpAddr::parse("10.0.0.7");
  Gid g1 = Gid::from_parts(0xFE80ULL << 48, 1), g2 = Gid::from_parts(0xFE80ULL << 48, 2);
  auto u = table.upsert(ip, HwAddr::from(0x48, g1), Lid{5});
  EXPECT_TRUE(u.added);
  EXPECT_FALSE(u.previous_gid);
  EXPECT_EQ(table.find(ip)->hw.gid(), g1);
  EXPECT_EQ(table.find(ip)->source_lid, Lid{5});

  // Same GID, new QPN, no LID this time: the known source LID is kept.
  u = table.upsert(ip, HwAddr::from(0x49, g1), std::nullopt);
  EXPECT_FALSE(u.added);
  EXPECT_FALSE(u.previous_gid);
  EXPECT_EQ(table.find(ip)->hw.qpn(), 0x49u);
  EXPECT_EQ(table.find(ip)->source_lid, Lid{5});

  // GID change: reported, and the old port's LID is dropped.
  u = table.upsert(ip, HwAddr::from(0x49, g2), std::nullopt);
  ASSERT_TRUE(u.previous_gid);
  EXPECT_EQ(*u.previous_gid, g1);
  EXPECT_FALSE(table.find(ip)->source_lid);
}

TEST(NeighbourTable, V4AndV6AreDistinctKeys) {
  NeighbourTable table;
  Gid g = Gid::from_parts(0xFE80ULL << 48, 1);
  table.upsert(*IpAddr::parse("10.0.0.1"), HwAddr::from(1, g), std::nullopt);
  table.upsert(*IpAddr::parse("fd00::1"), HwAddr::from(2, g), std::nullopt);
  EXPECT_EQ(table.size(), 2u);
  EXPECT_EQ(table.find(*IpAddr::parse("fd00::1"))->hw.qpn(), 2u);
  EXPECT_EQ(table.find(*IpAddr::parse("::ffff:10.0.0.1")), nullptr);  // v6-mapped is not the v4 key
  EXPECT_TRUE(table.remove(*IpAddr::parse("10.0.0.1")));
  EXPECT_FALSE(table.remove(*IpAddr::parse("10.0.0.1")));
  EXPECT_EQ(table.size(), 1u);
}

}  // namespace
}  // namespace ibat::core
