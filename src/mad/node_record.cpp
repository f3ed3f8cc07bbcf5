// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Encoding and decoding of the SA NodeRecord.
#include "mad/node_record.h"

#include <algorithm>

#include "wire/byte_order.h"

namespace ibat::mad {

std::array<std::uint8_t, kNodeRecordSize> encode_node_record(const NodeRecord& r) {
  std::array<std::uint8_t, kNodeRecordSize> out{};
  std::span<std::uint8_t> b(out);
  wire::put16(b, 0, r.lid.value);
  wire::put8(b, 4, r.base_version);
  wire::put8(b, 5, r.class_version);
  wire::put8(b, 6, r.node_type);
  wire::put8(b, 7, r.num_ports);
  wire::put64(b, 8, r.system_image_guid);
  wire::put64(b, 16, r.node_guid);
  wire::put64(b, 24, r.port_guid);
  wire::put16(b, 32, r.partition_cap);
  wire::put16(b, 34, r.device_id);
  wire::put32(b, 36, r.revision);
  wire::put8(b, 40, r.local_port_num);
  wire::put24(b, 41, r.vendor_id);
  std::copy(r.description.begin(), r.description.end(), out.begin() + 44);
  return out;
}

Result<NodeRecord> decode_node_record(std::span<const std::uint8_t> b) {
  if (b.size() < kNodeRecordSize) return too_short("NodeRecord", kNodeRecordSize, b.size());
  NodeRecord r;
  r.lid.value = wire::get16(b, 0);
  r.base_version = b[4];
  r.class_version = b[5];
  r.node_type = b[6];
  r.num_ports = b[7];
  r.system_image_guid = wire::get64(b, 8);
  r.node_guid = wire::get64(b, 16);
  r.port_guid = wire::get64(b, 24);
  r.partition_cap = wire::get16(b, 32);
  r.device_id = wire::get16(b, 34);
  r.revision = wire::get32(b, 36);
  r.local_port_num = b[40];
  r.vendor_id = wire::get24(b, 41);
  std::copy_n(b.begin() + 44, r.description.size(), r.description.begin());
  return r;
}

}  // namespace ibat::mad
