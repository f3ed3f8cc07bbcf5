// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// NodeRecord: every field at its IBA offset (bytes written by hand), round trips, truncation.
#include <gtest/gtest.h>

#include <vector>

#include "mad/node_record.h"

namespace ibat::mad {
namespace {

NodeRecord sample_switch() {
  NodeRecord r;
  r.lid.value = 0x0102;
  r.base_version = 1;
  r.class_version = 1;
  r.node_type = node_type::kSwitch;
  r.num_ports = 36;
  r.system_image_guid = 0x1111222233334444ULL;
  r.node_guid = 0x0000000000200003ULL;
  r.port_guid = 0x0000000000200003ULL;
  r.partition_cap = 8;
  r.device_id = 0xC738;
  r.revision = 0xA0B0C0D0;
  r.local_port_num = 0;
  r.vendor_id = 0x0002C9;
  const char name[] = "leaf3";
  std::copy(std::begin(name), std::end(name) - 1, r.description.begin());
  return r;
}

TEST(NodeRecord, FieldsAtTheirOffsets) {
  const auto bytes = encode_node_record(sample_switch());
  const std::vector<std::uint8_t> head(bytes.begin(), bytes.begin() + 44);
  const std::vector<std::uint8_t> expected = {
      0x01, 0x02, 0x00, 0x00,                          // LID, reserved
      0x01, 0x01, 0x02, 0x24,                          // BaseVersion, ClassVersion, NodeType, NumPorts
      0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44,  // SystemImageGUID
      0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x03,  // NodeGUID
      0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x03,  // PortGUID
      0x00, 0x08, 0xC7, 0x38,                          // PartitionCap, DeviceID
      0xA0, 0xB0, 0xC0, 0xD0,                          // Revision
      0x00, 0x00, 0x02, 0xC9};                         // LocalPortNum, VendorID
  EXPECT_EQ(head, expected);
  EXPECT_EQ(bytes[44], 'l');
  EXPECT_EQ(bytes[48], '3');
  EXPECT_EQ(bytes[49], 0);
}

TEST(NodeRecord, RoundTrip) {
  const NodeRecord r = sample_switch();
  auto back = decode_node_record(encode_node_record(r));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, r);
}

TEST(NodeRecord, ShorterThan108BytesFails) {
  const auto full = encode_node_record(sample_switch());
  for (std::size_t len = 0; len <= full.size(); ++len) {
    const std::vector<std::uint8_t> prefix(full.begin(), full.begin() + static_cast<long>(len));
    auto r = decode_node_record(prefix);
    ASSERT_EQ(r.ok(), len == kNodeRecordSize) << len;
    if (!r.ok()) {
      EXPECT_EQ(r.error().message, "NodeRecord: need 108 bytes, got " + std::to_string(len));
    }
  }
}

}  // namespace
}  // namespace ibat::mad
