// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SMP SMInfo attribute (IBA 14.2.5.13): the SM's GUID, SM_Key, ActCount, priority and state.
// ibat's port monitor detects SM restarts and fail-overs from changes in these.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "mad/result.h"

namespace ibat::mad {

inline constexpr std::size_t kSmInfoSize = 21;

enum class SmState : std::uint8_t { not_active = 0, discovering = 1, standby = 2, master = 3 };

struct SmInfo {
  std::uint64_t guid = 0;
  std::uint64_t sm_key = 0;
  std::uint32_t act_count = 0;
  std::uint8_t priority = 0;  // 4 bits
  std::uint8_t sm_state = 0;  // 4 bits, see SmState

  SmState state() const { return static_cast<SmState>(sm_state); }
  bool operator==(const SmInfo&) const = default;
};

std::array<std::uint8_t, kSmInfoSize> encode_sm_info(const SmInfo& info);
Result<SmInfo> decode_sm_info(std::span<const std::uint8_t> bytes);

}  // namespace ibat::mad
