// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The common MAD header (24 bytes, IBA 13.4.3) and its status word.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "mad/constants.h"
#include "mad/result.h"

namespace ibat::mad {

using MadBuffer = std::array<std::uint8_t, kMadSize>;

struct MadHeader {
  std::uint8_t base_version = kBaseVersion;
  std::uint8_t mgmt_class = 0;
  std::uint8_t class_version = 0;
  std::uint8_t method = 0;
  std::uint16_t status = 0;
  std::uint16_t class_specific = 0;  // hop pointer/count in a directed-route SMP
  std::uint64_t tid = 0;
  std::uint16_t attr_id = 0;
  std::uint16_t reserved = 0;
  std::uint32_t attr_mod = 0;

  bool is_response() const { return (method & method::kResponseBit) != 0; }
  // MAD status bits 2..4: common invalid-field code (0 = none).
  std::uint8_t invalid_field_code() const { return static_cast<std::uint8_t>((status >> 2) & 0x7); }
  bool busy() const { return (status & 0x1) != 0; }
  // SA status: bits 8..14 of the status word (0x0300 -> no_records).
  SaStatus sa_status() const { return static_cast<SaStatus>((status >> 8) & 0x7F); }
  bool operator==(const MadHeader&) const = default;
};

// Writes the header into the first 24 bytes of `out` (which must hold at least 24 bytes).
void encode_mad_header(const MadHeader& header, std::span<std::uint8_t, kMadHeaderSize> out);
Result<MadHeader> decode_mad_header(std::span<const std::uint8_t> bytes);

// Low 32 bits of a TID: umad2sim rewrites the upper 32 (docs/design.md §4), so responses match on these.
constexpr std::uint32_t tid_low32(std::uint64_t tid) { return static_cast<std::uint32_t>(tid); }

}  // namespace ibat::mad
