// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Encoding and decoding of the SMP SMInfo attribute.
#include "mad/sm_info.h"

#include "wire/byte_order.h"

namespace ibat::mad {

std::array<std::uint8_t, kSmInfoSize> encode_sm_info(const SmInfo& s) {
  std::array<std::uint8_t, kSmInfoSize> out{};
  std::span<std::uint8_t> b(out);
  wire::put64(b, 0, s.guid);
  wire::put64(b, 8, s.sm_key);
  wire::put32(b, 16, s.act_count);
  wire::put8(b, 20, (wire::bits8(s.priority, 4) << 4) | wire::bits8(s.sm_state, 4));
  return out;
}

Result<SmInfo> decode_sm_info(std::span<const std::uint8_t> b) {
  if (b.size() < kSmInfoSize) return too_short("SMInfo", kSmInfoSize, b.size());
  SmInfo s;
  s.guid = wire::get64(b, 0);
  s.sm_key = wire::get64(b, 8);
  s.act_count = wire::get32(b, 16);
  s.priority = static_cast<std::uint8_t>(b[20] >> 4);
  s.sm_state = wire::bits8(b[20], 4);
  return s;
}

}  // namespace ibat::mad
