// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SwitchInfoRecord: the fields ibat reads at their IBA offsets (bytes as OpenSM sent them on the
// lab's fattree-32), round trip, truncation.
#include <gtest/gtest.h>

#include <vector>

#include "mad/switch_info_record.h"

namespace ibat::mad {
namespace {

// saquery SWIR on fattree-32: LID 1, LinearFDBCap 0x7800, MulticastFDBCap 0x400, LinearFDBTop 0x26
// (32 HCA ports and 6 switches), then the rest of SwitchInfo.
const std::vector<std::uint8_t> kFromOpenSm = {0x00, 0x01, 0x00, 0x00, 0x78, 0x00, 0x00, 0x00, 0x04, 0x00,
                                               0x00, 0x26, 0x00, 0x00, 0x00, 0x90, 0x00, 0x00, 0x00, 0x40};

TEST(SwitchInfoRecord, FieldsAtTheirOffsets) {
  auto r = decode_switch_info_record(kFromOpenSm);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->lid.value, 1);
  EXPECT_EQ(r->linear_fdb_cap, 0x7800);
  EXPECT_EQ(r->random_fdb_cap, 0);
  EXPECT_EQ(r->multicast_fdb_cap, 0x400);
  EXPECT_EQ(r->linear_fdb_top, 0x26);
  const auto bytes = encode_switch_info_record(*r);
  EXPECT_EQ(std::vector<std::uint8_t>(bytes.begin(), bytes.end()),
            std::vector<std::uint8_t>(kFromOpenSm.begin(), kFromOpenSm.begin() + kSwitchInfoRecordSize));
}

TEST(SwitchInfoRecord, RoundTrip) {
  SwitchInfoRecord r;
  r.lid.value = 0xBEEF;
  r.linear_fdb_cap = 49152;
  r.random_fdb_cap = 7;
  r.multicast_fdb_cap = 4096;
  r.linear_fdb_top = 10'512;
  auto back = decode_switch_info_record(encode_switch_info_record(r));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, r);
}

TEST(SwitchInfoRecord, ShorterThan12BytesFails) {
  for (std::size_t len = 0; len < kSwitchInfoRecordSize; ++len) {
    const std::vector<std::uint8_t> prefix(kFromOpenSm.begin(), kFromOpenSm.begin() + static_cast<long>(len));
    auto r = decode_switch_info_record(prefix);
    ASSERT_FALSE(r.ok()) << len;
    EXPECT_EQ(r.error().message, "SwitchInfoRecord: need 12 bytes, got " + std::to_string(len));
  }
}

}  // namespace
}  // namespace ibat::mad
