// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Encoding and decoding of the SA MCMemberRecord.
#include "mad/mcmember_record.h"

#include "wire/byte_order.h"

namespace ibat::mad {

std::array<std::uint8_t, kMcMemberRecordSize> encode_mcmember_record(const McMemberRecord& r) {
  std::array<std::uint8_t, kMcMemberRecordSize> out{};
  std::span<std::uint8_t> b(out);
  wire::put_gid(b, 0, r.mgid);
  wire::put_gid(b, 16, r.port_gid);
  wire::put32(b, 32, r.qkey);
  wire::put16(b, 36, r.mlid.value);
  wire::put8(b, 38, (wire::bits8(r.mtu_selector, 2) << 6) | wire::bits8(r.mtu, 6));
  wire::put8(b, 39, r.tclass);
  wire::put16(b, 40, r.pkey.value);
  wire::put8(b, 42, (wire::bits8(r.rate_selector, 2) << 6) | wire::bits8(r.rate, 6));
  wire::put8(b, 43, (wire::bits8(r.pkt_life_selector, 2) << 6) | wire::bits8(r.pkt_life, 6));
  wire::put32(b, 44, (std::uint32_t{wire::bits8(r.sl, 4)} << 28) |
                         ((r.flow_label & 0xFFFFFU) << 8) | r.hop_limit);
  wire::put8(b, 48, (wire::bits8(r.scope, 4) << 4) | wire::bits8(r.join_state, 4));
  wire::put8(b, 49, std::uint32_t{r.proxy_join} << 7);
  return out;
}

Result<McMemberRecord> decode_mcmember_record(std::span<const std::uint8_t> b) {
  if (b.size() < kMcMemberRecordSize) {
    return too_short("MCMemberRecord", kMcMemberRecordSize, b.size());
  }
  McMemberRecord r;
  r.mgid = wire::get_gid(b, 0);
  r.port_gid = wire::get_gid(b, 16);
  r.qkey = wire::get32(b, 32);
  r.mlid.value = wire::get16(b, 36);
  r.mtu_selector = static_cast<std::uint8_t>(b[38] >> 6);
  r.mtu = wire::bits8(b[38], 6);
  r.tclass = b[39];
  r.pkey.value = wire::get16(b, 40);
  r.rate_selector = static_cast<std::uint8_t>(b[42] >> 6);
  r.rate = wire::bits8(b[42], 6);
  r.pkt_life_selector = static_cast<std::uint8_t>(b[43] >> 6);
  r.pkt_life = wire::bits8(b[43], 6);
  const std::uint32_t sl_flow_hop = wire::get32(b, 44);
  r.sl = static_cast<std::uint8_t>(sl_flow_hop >> 28);
  r.flow_label = (sl_flow_hop >> 8) & 0xFFFFF;
  r.hop_limit = wire::bits8(sl_flow_hop, 8);
  r.scope = static_cast<std::uint8_t>(b[48] >> 4);
  r.join_state = wire::bits8(b[48], 4);
  r.proxy_join = (b[49] >> 7) != 0;
  return r;
}

MadBuffer build_mcmember_get(std::uint64_t tid, const McMemberRecord& query,
                             std::uint64_t component_mask) {
  SaHeader sa;
  sa.component_mask = component_mask;
  const auto record = encode_mcmember_record(query);
  return build_sa_mad(sa_request_header(method::kGet, tid, attr::kMcMemberRecord), sa, record);
}

core::Gid ipoib_broadcast_mgid(core::Pkey pkey) {
  const std::uint64_t prefix = 0xFF12401B00000000ULL |
                               (std::uint64_t{static_cast<std::uint16_t>(pkey.value | 0x8000)} << 16);
  return core::Gid::from_parts(prefix, 0x00000000FFFFFFFFULL);
}

}  // namespace ibat::mad
