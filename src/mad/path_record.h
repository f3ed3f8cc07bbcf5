// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SA PathRecord (IBA 15.2.5.16): the 64-byte wire form of core::PathRecord, its component-mask bits
// and the GET PathRecord request builder.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "core/types.h"
#include "mad/sa_mad.h"

namespace ibat::mad {

inline constexpr std::size_t kPathRecordSize = 64;

// PathRecord ComponentMask bits (IBA table 207 order).
namespace pr_mask {
inline constexpr std::uint64_t kServiceIdMsb = 1ULL << 0;
inline constexpr std::uint64_t kServiceIdLsb = 1ULL << 1;
inline constexpr std::uint64_t kServiceId = kServiceIdMsb | kServiceIdLsb;
inline constexpr std::uint64_t kDgid = 1ULL << 2;
inline constexpr std::uint64_t kSgid = 1ULL << 3;
inline constexpr std::uint64_t kDlid = 1ULL << 4;
inline constexpr std::uint64_t kSlid = 1ULL << 5;
inline constexpr std::uint64_t kRawTraffic = 1ULL << 6;
inline constexpr std::uint64_t kFlowLabel = 1ULL << 8;
inline constexpr std::uint64_t kHopLimit = 1ULL << 9;
inline constexpr std::uint64_t kTClass = 1ULL << 10;
inline constexpr std::uint64_t kReversible = 1ULL << 11;
inline constexpr std::uint64_t kNumbPath = 1ULL << 12;
inline constexpr std::uint64_t kPkey = 1ULL << 13;
inline constexpr std::uint64_t kQosClass = 1ULL << 14;
inline constexpr std::uint64_t kSl = 1ULL << 15;
inline constexpr std::uint64_t kMtuSelector = 1ULL << 16;
inline constexpr std::uint64_t kMtu = 1ULL << 17;
inline constexpr std::uint64_t kRateSelector = 1ULL << 18;
inline constexpr std::uint64_t kRate = 1ULL << 19;
inline constexpr std::uint64_t kPktLifeSelector = 1ULL << 20;
inline constexpr std::uint64_t kPktLife = 1ULL << 21;
inline constexpr std::uint64_t kPreference = 1ULL << 22;
}  // namespace pr_mask

// Selector values for MTU, rate and packet lifetime (the top 2 bits of those bytes).
namespace selector {
inline constexpr std::uint8_t kGreaterThan = 0;
inline constexpr std::uint8_t kLessThan = 1;
inline constexpr std::uint8_t kExactly = 2;
inline constexpr std::uint8_t kLargestAvailable = 3;  // smallest for packet lifetime
}  // namespace selector

// Encodes every field; values wider than their wire field are truncated to it (flow label 20 bits,
// numb_path 7, qos_class 12, sl 4, selectors 2, mtu/rate/pkt_life 6).
std::array<std::uint8_t, kPathRecordSize> encode_path_record(const core::PathRecord& record);
Result<core::PathRecord> decode_path_record(std::span<const std::uint8_t> bytes);

// A SubnAdmGet(PathRecord) MAD carrying `query` with the given component mask.
MadBuffer build_path_record_get(std::uint64_t tid, const core::PathRecord& query,
                                std::uint64_t component_mask);

}  // namespace ibat::mad
