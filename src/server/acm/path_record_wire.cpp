// ibv_path_record codec (see path_record_wire.h).
#include "server/acm/path_record_wire.h"

#include <algorithm>

namespace ibat::acm {
namespace {

std::uint64_t load_be(std::span<const std::uint8_t> b, std::size_t at, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = (v << 8) | b[at + i];
  return v;
}

void store_be(std::span<std::uint8_t> b, std::size_t at, std::size_t n, std::uint64_t v) {
  for (std::size_t i = n; i-- > 0;) {
    b[at + i] = static_cast<std::uint8_t>(v & 0xFF);
    v >>= 8;
  }
}

}  // namespace

core::PathRecord decode_path_record(std::span<const std::uint8_t, 64> bytes) {
  core::PathRecord p;
  p.service_id = load_be(bytes, 0, 8);
  std::copy_n(bytes.begin() + 8, 16, p.dgid.raw.begin());
  std::copy_n(bytes.begin() + 24, 16, p.sgid.raw.begin());
  p.dlid.value = static_cast<std::uint16_t>(load_be(bytes, 40, 2));
  p.slid.value = static_cast<std::uint16_t>(load_be(bytes, 42, 2));
  const auto fl_hop = static_cast<std::uint32_t>(load_be(bytes, 44, 4));
  p.flow_label = (fl_hop >> 8) & 0xFFFFF;
  p.hop_limit = static_cast<std::uint8_t>(fl_hop & 0xFF);
  p.tclass = bytes[48];
  p.reversible = (bytes[49] & 0x80) != 0;
  p.numb_path = bytes[49] & 0x7F;
  p.pkey.value = static_cast<std::uint16_t>(load_be(bytes, 50, 2));
  const auto qos_sl = static_cast<std::uint16_t>(load_be(bytes, 52, 2));
  p.qos_class = static_cast<std::uint16_t>(qos_sl >> 4);
  p.sl = static_cast<std::uint8_t>(qos_sl & 0xF);
  p.mtu_selector = static_cast<std::uint8_t>(bytes[54] >> 6);
  p.mtu = bytes[54] & 0x3F;
  p.rate_selector = static_cast<std::uint8_t>(bytes[55] >> 6);
  p.rate = bytes[55] & 0x3F;
  p.pkt_life_selector = static_cast<std::uint8_t>(bytes[56] >> 6);
  p.pkt_life = bytes[56] & 0x3F;
  p.preference = bytes[57];
  return p;
}

void encode_path_record(const core::PathRecord& p, std::span<std::uint8_t, 64> out) {
  std::fill(out.begin(), out.end(), std::uint8_t{0});
  store_be(out, 0, 8, p.service_id);
  std::copy(p.dgid.raw.begin(), p.dgid.raw.end(), out.begin() + 8);
  std::copy(p.sgid.raw.begin(), p.sgid.raw.end(), out.begin() + 24);
  store_be(out, 40, 2, p.dlid.value);
  store_be(out, 42, 2, p.slid.value);
  store_be(out, 44, 4, ((std::uint64_t{p.flow_label} & 0xFFFFF) << 8) | p.hop_limit);
  out[48] = p.tclass;
  out[49] = static_cast<std::uint8_t>((p.reversible ? 0x80 : 0) | (p.numb_path & 0x7F));
  store_be(out, 50, 2, p.pkey.value);
  store_be(out, 52, 2, (std::uint64_t{p.qos_class} & 0xFFF) << 4 | (p.sl & 0xF));
  out[54] = static_cast<std::uint8_t>((p.mtu_selector & 0x3) << 6 | (p.mtu & 0x3F));
  out[55] = static_cast<std::uint8_t>((p.rate_selector & 0x3) << 6 | (p.rate & 0x3F));
  out[56] = static_cast<std::uint8_t>((p.pkt_life_selector & 0x3) << 6 | (p.pkt_life & 0x3F));
  out[57] = p.preference;
}

}  // namespace ibat::acm
