// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Numbers from the IBA spec used on the wire: sizes, management classes, methods, attribute IDs
// and status codes. Only what ibat sends or receives is listed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ibat::mad {

inline constexpr std::size_t kMadSize = 256;         // one MAD (a GetTableResp may be longer: RMPP)
inline constexpr std::size_t kMadHeaderSize = 24;    // common MAD header
inline constexpr std::size_t kSaHeaderSize = 56;     // common header + RMPP + SM_Key + offset + mask
inline constexpr std::size_t kSaDataSize = kMadSize - kSaHeaderSize;  // 200
inline constexpr std::size_t kSmpHeaderSize = 64;    // SMP header up to the attribute data
inline constexpr std::size_t kSmpDataSize = 64;      // SMP attribute data (bytes 64..127)
inline constexpr std::size_t kSmpMaxHops = 64;       // DR path arrays (bytes 128..191, 192..255)

inline constexpr std::uint8_t kBaseVersion = 1;
inline constexpr std::uint8_t kSmpClassVersion = 1;
inline constexpr std::uint8_t kSaClassVersion = 2;
inline constexpr std::uint32_t kQp1Qkey = 0x80010000;  // the well-known Q_Key of QP1 (GSI, the SA)

namespace mgmt_class {
inline constexpr std::uint8_t kSubnLidRouted = 0x01;
inline constexpr std::uint8_t kSubnDirectedRoute = 0x81;
inline constexpr std::uint8_t kSubnAdm = 0x03;
}  // namespace mgmt_class

namespace method {
inline constexpr std::uint8_t kGet = 0x01;
inline constexpr std::uint8_t kSet = 0x02;
inline constexpr std::uint8_t kGetResp = 0x81;
inline constexpr std::uint8_t kTrap = 0x05;
inline constexpr std::uint8_t kReport = 0x06;
inline constexpr std::uint8_t kReportResp = 0x86;
inline constexpr std::uint8_t kGetTable = 0x12;
inline constexpr std::uint8_t kGetTableResp = 0x92;
inline constexpr std::uint8_t kResponseBit = 0x80;
}  // namespace method

namespace attr {
inline constexpr std::uint16_t kClassPortInfo = 0x0001;
inline constexpr std::uint16_t kNotice = 0x0002;
inline constexpr std::uint16_t kInformInfo = 0x0003;
inline constexpr std::uint16_t kNodeInfo = 0x0011;
inline constexpr std::uint16_t kNodeRecord = 0x0011;  // SA class; NodeInfo is the SMP attribute
inline constexpr std::uint16_t kSwitchInfoRecord = 0x0014;
inline constexpr std::uint16_t kPortInfo = 0x0015;
inline constexpr std::uint16_t kSmInfo = 0x0020;
inline constexpr std::uint16_t kPathRecord = 0x0035;
inline constexpr std::uint16_t kMcMemberRecord = 0x0038;
inline constexpr std::uint16_t kInformInfoRecord = 0x00F3;
}  // namespace attr

// SA class-specific status (MAD status bits 8..14), IBA 15.2.1.1.
enum class SaStatus : std::uint8_t {
  success = 0,
  no_resources = 1,
  req_invalid = 2,
  no_records = 3,
  too_many_records = 4,
  invalid_gid = 5,
  insufficient_components = 6,
  req_denied = 7,
};

}  // namespace ibat::mad
