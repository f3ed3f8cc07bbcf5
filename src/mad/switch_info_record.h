// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SA SwitchInfoRecord (IBA 15.2.5.4): a switch's LID and its SwitchInfo. ibat reads one field of
// it, LinearFDBTop: the highest unicast LID the SM programmed into the switch's forwarding table,
// the same in every switch after a sweep. It bounds the subnet's LIDs (end ports and switches) and
// so tells a starting daemon how large its subnet is before it asks a path (Resolver: the spread
// of the subnet's GetTables), at the cost of a query that computes no path.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "core/types.h"
#include "mad/sa_mad.h"

namespace ibat::mad {

// The bytes ibat reads: the RID (LID, reserved) and SwitchInfo through LinearFDBTop. The SA's
// records are longer (the rest of SwitchInfo, padding): AttributeOffset gives their stride.
inline constexpr std::size_t kSwitchInfoRecordSize = 12;

struct SwitchInfoRecord {
  core::Lid lid;                       // the switch (its port 0)
  std::uint16_t linear_fdb_cap = 0;    // LinearFDBCap: entries the switch's LFT can hold
  std::uint16_t random_fdb_cap = 0;
  std::uint16_t multicast_fdb_cap = 0;
  std::uint16_t linear_fdb_top = 0;    // LinearFDBTop: the highest LID in the LFT
  bool operator==(const SwitchInfoRecord&) const = default;
};

std::array<std::uint8_t, kSwitchInfoRecordSize> encode_switch_info_record(const SwitchInfoRecord& record);
Result<SwitchInfoRecord> decode_switch_info_record(std::span<const std::uint8_t> bytes);

}  // namespace ibat::mad
