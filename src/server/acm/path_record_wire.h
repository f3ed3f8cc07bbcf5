// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// struct ibv_path_record (rdma-core infiniband/sa.h), the 64-byte path layout that ACM messages
// carry: every multi-byte field in network byte order.
//   0 service_id(8)  8 dgid(16)  24 sgid(16)  40 dlid(2)  42 slid(2)
//   44 flowlabel_hoplimit(4): flow label bits 27:8, hop limit 7:0
//   48 tclass  49 reversible(7) | numb_path(6:0)  50 pkey(2)  52 qos_class(15:4) | sl(3:0)
//   54 mtu  55 rate  56 packet lifetime: selector bits 7:6, value 5:0   57 preference  58 reserved(6)
// It is the SA PathRecord's layout (mad/path_record.h) with the RawTraffic bit (byte 44, bit 7)
// reserved, so the codec is mad's.
#pragma once

#include <cstdint>
#include <span>

#include "core/types.h"

namespace ibat::acm {

// Reads 64 bytes (the caller checks the length). raw_traffic is not carried and reads as false.
core::PathRecord decode_path_record(std::span<const std::uint8_t, 64> bytes);
// Writes 64 bytes; the reserved tail is zero.
void encode_path_record(const core::PathRecord& path, std::span<std::uint8_t, 64> out);

}  // namespace ibat::acm
