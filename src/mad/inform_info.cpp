// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Encoding and decoding of the SA InformInfo attribute (generic form).
#include "mad/inform_info.h"

#include "wire/byte_order.h"

namespace ibat::mad {

InformInfo trap_subscription(std::uint16_t trap_number, bool subscribe) {
  InformInfo info;
  info.trap_number = trap_number;
  info.subscribe = subscribe;
  return info;
}

std::array<std::uint8_t, kInformInfoSize> encode_inform_info(const InformInfo& i) {
  std::array<std::uint8_t, kInformInfoSize> out{};
  std::span<std::uint8_t> b(out);
  wire::put_gid(b, 0, i.gid);
  wire::put16(b, 16, i.lid_range_begin);
  wire::put16(b, 18, i.lid_range_end);
  wire::put8(b, 22, i.is_generic ? 1 : 0);
  wire::put8(b, 23, i.subscribe ? 1 : 0);
  wire::put16(b, 24, i.type);
  wire::put16(b, 26, i.trap_number);
  wire::put32(b, 28, ((i.qpn & 0xFFFFFFU) << 8) | wire::bits8(i.resp_time_value, 5));
  wire::put24(b, 33, i.producer_type & 0xFFFFFFU);
  return out;
}

Result<InformInfo> decode_inform_info(std::span<const std::uint8_t> b) {
  if (b.size() < kInformInfoSize) return too_short("InformInfo", kInformInfoSize, b.size());
  InformInfo i;
  i.gid = wire::get_gid(b, 0);
  i.lid_range_begin = wire::get16(b, 16);
  i.lid_range_end = wire::get16(b, 18);
  i.is_generic = b[22] != 0;
  i.subscribe = b[23] != 0;
  i.type = wire::get16(b, 24);
  i.trap_number = wire::get16(b, 26);
  const std::uint32_t qpn_word = wire::get32(b, 28);
  i.qpn = qpn_word >> 8;
  i.resp_time_value = wire::bits8(qpn_word, 5);
  i.producer_type = wire::get24(b, 33);
  return i;
}

MadBuffer build_inform_info_set(std::uint64_t tid, const InformInfo& info) {
  const auto record = encode_inform_info(info);
  return build_sa_mad(sa_request_header(method::kSet, tid, attr::kInformInfo), SaHeader{}, record);
}

}  // namespace ibat::mad
