// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Subnet Management Packets (IBA 14.2.1): LID-routed (class 0x01) and directed-route (class 0x81)
// headers, the 64-byte attribute data, and GET builders. ibat uses them to read PortInfo from its
// own port (directed route, 0 hops) and SMInfo from the SM (LID-routed).
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "mad/mad_header.h"

namespace ibat::mad {

inline constexpr std::uint16_t kPermissiveLid = 0xFFFF;

struct SmpHeader {
  bool directed_route = false;
  std::uint8_t method = 0;
  std::uint16_t status = 0;         // 15 bits for directed route (the top bit is `direction`)
  bool direction = false;           // directed route: D bit, true on the return trip
  std::uint8_t hop_pointer = 0;     // directed route only
  std::uint8_t hop_count = 0;       // directed route only, at most 63
  std::uint64_t tid = 0;
  std::uint16_t attr_id = 0;
  std::uint32_t attr_mod = 0;
  std::uint64_t m_key = 0;
  std::uint16_t dr_slid = kPermissiveLid;  // directed route only
  std::uint16_t dr_dlid = kPermissiveLid;  // directed route only
  // Directed route only: entries 0..hop_count are meaningful (entry 0 is unused by the IBA).
  std::array<std::uint8_t, kSmpMaxHops> initial_path{};
  std::array<std::uint8_t, kSmpMaxHops> return_path{};
  bool operator==(const SmpHeader&) const = default;
};

struct Smp {
  SmpHeader header;
  std::array<std::uint8_t, kSmpDataSize> data{};
};

// A full 256-byte SMP; `data` (at most 64 bytes) goes at offset 64. Directed-route path entries
// past hop_count are written as zero. Throws std::length_error if data is longer than 64 bytes.
MadBuffer encode_smp(const SmpHeader& header, std::span<const std::uint8_t> data);
// Needs the header and attribute data (128 bytes); a directed-route SMP also needs its initial and
// return path up to hop_count (so a 224-byte umad2sim buffer is enough for up to 31 hops).
Result<Smp> decode_smp(std::span<const std::uint8_t> bytes);

// SubnGet(attr_id) to a LID.
MadBuffer build_smp_get_lid_routed(std::uint64_t tid, std::uint16_t attr_id, std::uint32_t attr_mod);
// SubnGet(attr_id) along a directed route: `path` holds the output port of each hop (empty = the
// local port). Throws std::length_error for more than 63 hops.
MadBuffer build_smp_get_directed(std::uint64_t tid, std::uint16_t attr_id, std::uint32_t attr_mod,
                                 std::span<const std::uint8_t> path);

}  // namespace ibat::mad
