// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SA InformInfo (IBA 13.4.8.3, generic form): the subscription ibat sends for traps 64 and 65
// (GID in / out of service), and the OpenSM answer to it.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "core/types.h"
#include "mad/sa_mad.h"

namespace ibat::mad {

inline constexpr std::size_t kInformInfoSize = 36;

struct InformInfo {
  core::Gid gid;                           // zero: subscribe by LID range
  std::uint16_t lid_range_begin = 0xFFFF;  // 0xFFFF: all LIDs
  std::uint16_t lid_range_end = 0;
  bool is_generic = true;
  bool subscribe = true;                   // false: unsubscribe
  std::uint16_t type = 0xFFFF;             // 0xFFFF: all types
  std::uint16_t trap_number = 0;           // generic form (device ID in the vendor form)
  std::uint32_t qpn = 1;                   // 24 bits
  std::uint8_t resp_time_value = 0;        // 5 bits
  std::uint32_t producer_type = 0xFFFFFF;  // 24 bits (vendor ID in the vendor form)
  bool operator==(const InformInfo&) const = default;
};

// The subscription found to work with OpenSM for one trap number (docs/design.md §4).
InformInfo trap_subscription(std::uint16_t trap_number, bool subscribe = true);

std::array<std::uint8_t, kInformInfoSize> encode_inform_info(const InformInfo& info);
Result<InformInfo> decode_inform_info(std::span<const std::uint8_t> bytes);

// A SubnAdmSet(InformInfo) MAD.
MadBuffer build_inform_info_set(std::uint64_t tid, const InformInfo& info);

}  // namespace ibat::mad
