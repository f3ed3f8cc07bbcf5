// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Encoding and decoding of the 64-byte SA PathRecord.
#include "mad/path_record.h"

#include "wire/byte_order.h"

namespace ibat::mad {

std::array<std::uint8_t, kPathRecordSize> encode_path_record(const core::PathRecord& r) {
  std::array<std::uint8_t, kPathRecordSize> out{};
  std::span<std::uint8_t> b(out);
  wire::put64(b, 0, r.service_id);
  wire::put_gid(b, 8, r.dgid);
  wire::put_gid(b, 24, r.sgid);
  wire::put16(b, 40, r.dlid.value);
  wire::put16(b, 42, r.slid.value);
  wire::put32(b, 44, (std::uint32_t{r.raw_traffic} << 31) | ((r.flow_label & 0xFFFFFU) << 8) |
                         r.hop_limit);
  wire::put8(b, 48, r.tclass);
  wire::put8(b, 49, (std::uint32_t{r.reversible} << 7) | wire::bits8(r.numb_path, 7));
  wire::put16(b, 50, r.pkey.value);
  wire::put16(b, 52, (std::uint32_t{r.qos_class} & 0xFFFU) << 4 | wire::bits8(r.sl, 4));
  wire::put8(b, 54, (wire::bits8(r.mtu_selector, 2) << 6) | wire::bits8(r.mtu, 6));
  wire::put8(b, 55, (wire::bits8(r.rate_selector, 2) << 6) | wire::bits8(r.rate, 6));
  wire::put8(b, 56, (wire::bits8(r.pkt_life_selector, 2) << 6) | wire::bits8(r.pkt_life, 6));
  wire::put8(b, 57, r.preference);
  return out;
}

Result<core::PathRecord> decode_path_record(std::span<const std::uint8_t> b) {
  if (b.size() < kPathRecordSize) return too_short("PathRecord", kPathRecordSize, b.size());
  core::PathRecord r;
  r.service_id = wire::get64(b, 0);
  r.dgid = wire::get_gid(b, 8);
  r.sgid = wire::get_gid(b, 24);
  r.dlid.value = wire::get16(b, 40);
  r.slid.value = wire::get16(b, 42);
  const std::uint32_t flow_word = wire::get32(b, 44);
  r.raw_traffic = (flow_word >> 31) != 0;
  r.flow_label = (flow_word >> 8) & 0xFFFFF;
  r.hop_limit = wire::bits8(flow_word, 8);
  r.tclass = b[48];
  r.reversible = (b[49] >> 7) != 0;
  r.numb_path = wire::bits8(b[49], 7);
  r.pkey.value = wire::get16(b, 50);
  const std::uint16_t qos_word = wire::get16(b, 52);
  r.qos_class = static_cast<std::uint16_t>(qos_word >> 4);
  r.sl = wire::bits8(qos_word, 4);
  r.mtu_selector = static_cast<std::uint8_t>(b[54] >> 6);
  r.mtu = wire::bits8(b[54], 6);
  r.rate_selector = static_cast<std::uint8_t>(b[55] >> 6);
  r.rate = wire::bits8(b[55], 6);
  r.pkt_life_selector = static_cast<std::uint8_t>(b[56] >> 6);
  r.pkt_life = wire::bits8(b[56], 6);
  r.preference = b[57];
  return r;
}

MadBuffer build_path_record_get(std::uint64_t tid, const core::PathRecord& query,
                                std::uint64_t component_mask) {
  SaHeader sa;
  sa.component_mask = component_mask;
  const auto record = encode_path_record(query);
  return build_sa_mad(sa_request_header(method::kGet, tid, attr::kPathRecord), sa, record);
}

}  // namespace ibat::mad
