// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Encoding and decoding of the SA SwitchInfoRecord's leading fields.
#include "mad/switch_info_record.h"

#include "wire/byte_order.h"

namespace ibat::mad {

std::array<std::uint8_t, kSwitchInfoRecordSize> encode_switch_info_record(const SwitchInfoRecord& r) {
  std::array<std::uint8_t, kSwitchInfoRecordSize> out{};
  std::span<std::uint8_t> b(out);
  wire::put16(b, 0, r.lid.value);
  wire::put16(b, 4, r.linear_fdb_cap);
  wire::put16(b, 6, r.random_fdb_cap);
  wire::put16(b, 8, r.multicast_fdb_cap);
  wire::put16(b, 10, r.linear_fdb_top);
  return out;
}

Result<SwitchInfoRecord> decode_switch_info_record(std::span<const std::uint8_t> b) {
  if (b.size() < kSwitchInfoRecordSize) return too_short("SwitchInfoRecord", kSwitchInfoRecordSize, b.size());
  SwitchInfoRecord r;
  r.lid.value = wire::get16(b, 0);
  r.linear_fdb_cap = wire::get16(b, 4);
  r.random_fdb_cap = wire::get16(b, 6);
  r.multicast_fdb_cap = wire::get16(b, 8);
  r.linear_fdb_top = wire::get16(b, 10);
  return r;
}

}  // namespace ibat::mad
