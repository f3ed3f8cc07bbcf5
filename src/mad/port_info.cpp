// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Encoding and decoding of the SMP PortInfo attribute.
#include "mad/port_info.h"

#include "wire/byte_order.h"

namespace ibat::mad {
namespace {

// Two 4-bit fields in one byte, high nibble first.
std::uint8_t nibbles(std::uint8_t high, std::uint8_t low) {
  return static_cast<std::uint8_t>((wire::bits8(high, 4) << 4) | wire::bits8(low, 4));
}
std::uint8_t high_nibble(std::uint8_t byte) { return static_cast<std::uint8_t>(byte >> 4); }
std::uint8_t low_nibble(std::uint8_t byte) { return wire::bits8(byte, 4); }
std::uint8_t bit(std::uint8_t byte, unsigned index) { return (byte >> index) & 1U; }

}  // namespace

std::array<std::uint8_t, kPortInfoSize> encode_port_info(const PortInfo& p) {
  std::array<std::uint8_t, kPortInfoSize> out{};
  std::span<std::uint8_t> b(out);
  wire::put64(b, 0, p.m_key);
  wire::put64(b, 8, p.gid_prefix);
  wire::put16(b, 16, p.lid);
  wire::put16(b, 18, p.master_sm_lid);
  wire::put32(b, 20, p.capability_mask);
  wire::put16(b, 24, p.diag_code);
  wire::put16(b, 26, p.m_key_lease_period);
  wire::put8(b, 28, p.local_port_num);
  wire::put8(b, 29, p.link_width_enabled);
  wire::put8(b, 30, p.link_width_supported);
  wire::put8(b, 31, p.link_width_active);
  wire::put8(b, 32, nibbles(p.link_speed_supported, p.port_state));
  wire::put8(b, 33, nibbles(p.port_physical_state, p.link_down_default_state));
  wire::put8(b, 34, (wire::bits8(p.m_key_protect_bits, 2) << 6) | wire::bits8(p.lmc, 3));
  wire::put8(b, 35, nibbles(p.link_speed_active, p.link_speed_enabled));
  wire::put8(b, 36, nibbles(p.neighbor_mtu, p.master_sm_sl));
  wire::put8(b, 37, nibbles(p.vl_cap, p.init_type));
  wire::put8(b, 38, p.vl_high_limit);
  wire::put8(b, 39, p.vl_arbitration_high_cap);
  wire::put8(b, 40, p.vl_arbitration_low_cap);
  wire::put8(b, 41, nibbles(p.init_type_reply, p.mtu_cap));
  wire::put8(b, 42, (wire::bits8(p.vl_stall_count, 3) << 5) | wire::bits8(p.hoq_life, 5));
  wire::put8(b, 43, (wire::bits8(p.operational_vls, 4) << 4) |
                        (std::uint32_t{p.partition_enforcement_inbound} << 3) |
                        (std::uint32_t{p.partition_enforcement_outbound} << 2) |
                        (std::uint32_t{p.filter_raw_inbound} << 1) |
                        std::uint32_t{p.filter_raw_outbound});
  wire::put16(b, 44, p.m_key_violations);
  wire::put16(b, 46, p.p_key_violations);
  wire::put16(b, 48, p.q_key_violations);
  wire::put8(b, 50, p.guid_cap);
  wire::put8(b, 51, (std::uint32_t{p.client_reregister} << 7) |
                        (wire::bits8(p.multicast_pkey_trap_suppression, 2) << 5) |
                        wire::bits8(p.subnet_timeout, 5));
  wire::put8(b, 52, wire::bits8(p.resp_time_value, 5));
  wire::put8(b, 53, nibbles(p.local_phy_errors, p.overrun_errors));
  wire::put16(b, 54, p.max_credit_hint);
  wire::put24(b, 57, p.link_round_trip_latency & 0xFFFFFFU);
  wire::put16(b, 60, p.capability_mask2);
  wire::put8(b, 62, nibbles(p.link_speed_ext_active, p.link_speed_ext_supported));
  wire::put8(b, 63, wire::bits8(p.link_speed_ext_enabled, 5));
  return out;
}

Result<PortInfo> decode_port_info(std::span<const std::uint8_t> b) {
  if (b.size() < kPortInfoSize) return too_short("PortInfo", kPortInfoSize, b.size());
  PortInfo p;
  p.m_key = wire::get64(b, 0);
  p.gid_prefix = wire::get64(b, 8);
  p.lid = wire::get16(b, 16);
  p.master_sm_lid = wire::get16(b, 18);
  p.capability_mask = wire::get32(b, 20);
  p.diag_code = wire::get16(b, 24);
  p.m_key_lease_period = wire::get16(b, 26);
  p.local_port_num = b[28];
  p.link_width_enabled = b[29];
  p.link_width_supported = b[30];
  p.link_width_active = b[31];
  p.link_speed_supported = high_nibble(b[32]);
  p.port_state = low_nibble(b[32]);
  p.port_physical_state = high_nibble(b[33]);
  p.link_down_default_state = low_nibble(b[33]);
  p.m_key_protect_bits = static_cast<std::uint8_t>(b[34] >> 6);
  p.lmc = wire::bits8(b[34], 3);
  p.link_speed_active = high_nibble(b[35]);
  p.link_speed_enabled = low_nibble(b[35]);
  p.neighbor_mtu = high_nibble(b[36]);
  p.master_sm_sl = low_nibble(b[36]);
  p.vl_cap = high_nibble(b[37]);
  p.init_type = low_nibble(b[37]);
  p.vl_high_limit = b[38];
  p.vl_arbitration_high_cap = b[39];
  p.vl_arbitration_low_cap = b[40];
  p.init_type_reply = high_nibble(b[41]);
  p.mtu_cap = low_nibble(b[41]);
  p.vl_stall_count = static_cast<std::uint8_t>(b[42] >> 5);
  p.hoq_life = wire::bits8(b[42], 5);
  p.operational_vls = high_nibble(b[43]);
  p.partition_enforcement_inbound = bit(b[43], 3) != 0;
  p.partition_enforcement_outbound = bit(b[43], 2) != 0;
  p.filter_raw_inbound = bit(b[43], 1) != 0;
  p.filter_raw_outbound = bit(b[43], 0) != 0;
  p.m_key_violations = wire::get16(b, 44);
  p.p_key_violations = wire::get16(b, 46);
  p.q_key_violations = wire::get16(b, 48);
  p.guid_cap = b[50];
  p.client_reregister = bit(b[51], 7) != 0;
  p.multicast_pkey_trap_suppression = wire::bits8(b[51] >> 5, 2);
  p.subnet_timeout = wire::bits8(b[51], 5);
  p.resp_time_value = wire::bits8(b[52], 5);
  p.local_phy_errors = high_nibble(b[53]);
  p.overrun_errors = low_nibble(b[53]);
  p.max_credit_hint = wire::get16(b, 54);
  p.link_round_trip_latency = wire::get24(b, 57);
  p.capability_mask2 = wire::get16(b, 60);
  p.link_speed_ext_active = high_nibble(b[62]);
  p.link_speed_ext_supported = low_nibble(b[62]);
  p.link_speed_ext_enabled = wire::bits8(b[63], 5);
  return p;
}

}  // namespace ibat::mad
