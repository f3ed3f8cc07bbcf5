// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SA MCMemberRecord (IBA 15.2.5.17): multicast group parameters. ibat reads the IPoIB broadcast
// group (MTU, rate, SL, Q_Key) with a GET; provisional paths are built from it.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "core/types.h"
#include "mad/sa_mad.h"

namespace ibat::mad {

inline constexpr std::size_t kMcMemberRecordSize = 52;  // padded to 56 in SA responses

struct McMemberRecord {
  core::Gid mgid;
  core::Gid port_gid;
  std::uint32_t qkey = 0;
  core::Lid mlid;
  std::uint8_t mtu_selector = 0;  // 2 bits
  std::uint8_t mtu = 0;           // 6 bits
  std::uint8_t tclass = 0;
  core::Pkey pkey;
  std::uint8_t rate_selector = 0;
  std::uint8_t rate = 0;
  std::uint8_t pkt_life_selector = 0;
  std::uint8_t pkt_life = 0;
  std::uint8_t sl = 0;            // 4 bits
  std::uint32_t flow_label = 0;   // 20 bits
  std::uint8_t hop_limit = 0;
  std::uint8_t scope = 0;         // 4 bits
  std::uint8_t join_state = 0;    // 4 bits: full, non, send-only non, send-only full member
  bool proxy_join = false;
  bool operator==(const McMemberRecord&) const = default;
};

// MCMemberRecord ComponentMask bits.
namespace mcm_mask {
inline constexpr std::uint64_t kMgid = 1ULL << 0;
inline constexpr std::uint64_t kPortGid = 1ULL << 1;
inline constexpr std::uint64_t kQkey = 1ULL << 2;
inline constexpr std::uint64_t kMlid = 1ULL << 3;
inline constexpr std::uint64_t kMtuSelector = 1ULL << 4;
inline constexpr std::uint64_t kMtu = 1ULL << 5;
inline constexpr std::uint64_t kTClass = 1ULL << 6;
inline constexpr std::uint64_t kPkey = 1ULL << 7;
inline constexpr std::uint64_t kRateSelector = 1ULL << 8;
inline constexpr std::uint64_t kRate = 1ULL << 9;
inline constexpr std::uint64_t kPktLifeSelector = 1ULL << 10;
inline constexpr std::uint64_t kPktLife = 1ULL << 11;
inline constexpr std::uint64_t kSl = 1ULL << 12;
inline constexpr std::uint64_t kFlowLabel = 1ULL << 13;
inline constexpr std::uint64_t kHopLimit = 1ULL << 14;
inline constexpr std::uint64_t kScope = 1ULL << 15;
inline constexpr std::uint64_t kJoinState = 1ULL << 16;
inline constexpr std::uint64_t kProxyJoin = 1ULL << 17;
}  // namespace mcm_mask

std::array<std::uint8_t, kMcMemberRecordSize> encode_mcmember_record(const McMemberRecord& r);
Result<McMemberRecord> decode_mcmember_record(std::span<const std::uint8_t> bytes);

// A SubnAdmGet(MCMemberRecord) MAD carrying `query` with the given component mask.
MadBuffer build_mcmember_get(std::uint64_t tid, const McMemberRecord& query,
                             std::uint64_t component_mask);

// The IPoIB broadcast group GID for a P_Key: ff12:401b:<pkey|0x8000>::ffff:ffff (RFC 4391).
core::Gid ipoib_broadcast_mgid(core::Pkey pkey);

}  // namespace ibat::mad
