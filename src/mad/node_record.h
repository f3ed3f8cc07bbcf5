// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SA NodeRecord (IBA 15.2.5.2): a port's LID and its node's NodeInfo and NodeDescription. ibat asks
// for the switches' records (NodeType 2) to tell a switch's port 0 from an HCA port in a PathRecord
// table: a PathRecord does not say what kind of port its destination is.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "core/types.h"
#include "mad/sa_mad.h"

namespace ibat::mad {

inline constexpr std::size_t kNodeRecordSize = 108;  // padded to 112 in SA responses

namespace node_type {
inline constexpr std::uint8_t kSwitch = 2;
}  // namespace node_type

struct NodeRecord {
  core::Lid lid;  // the port's base LID (a switch: its port 0)
  std::uint8_t base_version = 0;
  std::uint8_t class_version = 0;
  std::uint8_t node_type = 0;
  std::uint8_t num_ports = 0;
  std::uint64_t system_image_guid = 0;
  std::uint64_t node_guid = 0;
  std::uint64_t port_guid = 0;
  std::uint16_t partition_cap = 0;
  std::uint16_t device_id = 0;
  std::uint32_t revision = 0;
  std::uint8_t local_port_num = 0;
  std::uint32_t vendor_id = 0;  // 24 bits
  std::array<std::uint8_t, 64> description{};
  bool operator==(const NodeRecord&) const = default;
};

// NodeRecord ComponentMask bits (the record's fields in order, NodeInfo's flattened): the one ibat uses.
namespace nr_mask {
inline constexpr std::uint64_t kNodeType = 1ULL << 4;
}  // namespace nr_mask

// Encodes every field; vendor_id is truncated to its 24 bits.
std::array<std::uint8_t, kNodeRecordSize> encode_node_record(const NodeRecord& record);
Result<NodeRecord> decode_node_record(std::span<const std::uint8_t> bytes);

}  // namespace ibat::mad
