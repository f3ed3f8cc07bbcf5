// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SMP PortInfo attribute (IBA 14.2.5.6, 64 bytes): every field, including the LID, SM LID, port
// state and LMC that ibat's port monitor tracks.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "mad/result.h"

namespace ibat::mad {

inline constexpr std::size_t kPortInfoSize = 64;

// PortState values (IBA 14.2.5.6, table 146).
enum class PortState : std::uint8_t { no_change = 0, down = 1, init = 2, armed = 3, active = 4 };

struct PortInfo {
  std::uint64_t m_key = 0;
  std::uint64_t gid_prefix = 0;
  std::uint16_t lid = 0;
  std::uint16_t master_sm_lid = 0;
  std::uint32_t capability_mask = 0;
  std::uint16_t diag_code = 0;
  std::uint16_t m_key_lease_period = 0;
  std::uint8_t local_port_num = 0;
  std::uint8_t link_width_enabled = 0;
  std::uint8_t link_width_supported = 0;
  std::uint8_t link_width_active = 0;
  std::uint8_t link_speed_supported = 0;      // 4 bits
  std::uint8_t port_state = 0;                // 4 bits, see PortState
  std::uint8_t port_physical_state = 0;       // 4 bits
  std::uint8_t link_down_default_state = 0;   // 4 bits
  std::uint8_t m_key_protect_bits = 0;        // 2 bits
  std::uint8_t lmc = 0;                       // 3 bits
  std::uint8_t link_speed_active = 0;         // 4 bits
  std::uint8_t link_speed_enabled = 0;        // 4 bits
  std::uint8_t neighbor_mtu = 0;              // 4 bits
  std::uint8_t master_sm_sl = 0;              // 4 bits
  std::uint8_t vl_cap = 0;                    // 4 bits
  std::uint8_t init_type = 0;                 // 4 bits
  std::uint8_t vl_high_limit = 0;
  std::uint8_t vl_arbitration_high_cap = 0;
  std::uint8_t vl_arbitration_low_cap = 0;
  std::uint8_t init_type_reply = 0;           // 4 bits
  std::uint8_t mtu_cap = 0;                   // 4 bits
  std::uint8_t vl_stall_count = 0;            // 3 bits
  std::uint8_t hoq_life = 0;                  // 5 bits
  std::uint8_t operational_vls = 0;           // 4 bits
  bool partition_enforcement_inbound = false;
  bool partition_enforcement_outbound = false;
  bool filter_raw_inbound = false;
  bool filter_raw_outbound = false;
  std::uint16_t m_key_violations = 0;
  std::uint16_t p_key_violations = 0;
  std::uint16_t q_key_violations = 0;
  std::uint8_t guid_cap = 0;
  bool client_reregister = false;
  std::uint8_t multicast_pkey_trap_suppression = 0;  // 2 bits
  std::uint8_t subnet_timeout = 0;            // 5 bits
  std::uint8_t resp_time_value = 0;           // 5 bits
  std::uint8_t local_phy_errors = 0;          // 4 bits
  std::uint8_t overrun_errors = 0;            // 4 bits
  std::uint16_t max_credit_hint = 0;
  std::uint32_t link_round_trip_latency = 0;  // 24 bits
  std::uint16_t capability_mask2 = 0;
  std::uint8_t link_speed_ext_active = 0;     // 4 bits
  std::uint8_t link_speed_ext_supported = 0;  // 4 bits
  std::uint8_t link_speed_ext_enabled = 0;    // 5 bits

  PortState state() const { return static_cast<PortState>(port_state); }
  bool operator==(const PortInfo&) const = default;
};

std::array<std::uint8_t, kPortInfoSize> encode_port_info(const PortInfo& info);
Result<PortInfo> decode_port_info(std::span<const std::uint8_t> bytes);

}  // namespace ibat::mad
